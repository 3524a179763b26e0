// Package lockedfile is mcpform's one implementation of the file
// mechanisms several packages need: an exclusive advisory lock between
// processes (Lock, TryLock, Unlock, OpenDir), replacing a file's contents
// atomically (WriteFile), so a reader, or a crash, sees the old file or the
// new one and never half of one, and reading a file the repository holds
// (ReadRegular: only a regular file, bounded, so a FIFO or /dev/zero in its
// place cannot hang or exhaust the reader).
//
// lock writes mcp.lock with both (under the lock of the lock's directory,
// removing what killed writers left with RemoveTemps), plan saves plan
// files with WriteFile, and runtime/taint keeps its session files with
// both.
//
// The lock is flock(2) on Unix, so it may be taken on a directory, and
// LockFileEx on the file's first byte on Windows, where it must be a file
// that holds no data (Windows enforces the locked byte against other
// processes' reads and writes) and cannot be a directory: OpenDir hides
// that difference. Either way the kernel releases the lock when its holder
// dies, so a holder's leftovers found under the lock belong to no live
// process. Elsewhere Lock and TryLock return errors.ErrUnsupported, so a
// caller that needs the lock fails closed.
//
// A leaf: it imports nothing of mcpform's.
package lockedfile
