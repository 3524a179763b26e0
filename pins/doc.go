// Package pins says which files a local server's command starts, by
// content, and whether they are still those files. plan records the pins
// of each command server (lock.Pins, under the entry's "mcpform" key) and
// runtime checks them before every start, through the same resolution
// os/exec uses to start the command, so the two can never look at two
// different files.
//
// It pins command[0] as resolved (symlinks followed to the real file) and,
// when command[0] is an interpreter, the script it runs. It does not pin
// what a package runner (npx, uvx) fetches, nor what a program loads at
// run time (shared libraries, modules a script imports).
//
// The check hashes each pinned file; on Linux a small cache in mcpform's
// state directory, keyed by the file's device, inode, size, mtime and
// ctime, spares re-hashing a file that has not been written since (ctime
// changes on every write and cannot be set back, so a file rewritten with
// its old mtime is hashed again).
package pins
