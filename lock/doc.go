// Package lock is mcp.lock: the model of a locked server surface (lockfile
// versions 1 and 2), its RFC 8785 digests, the strict loader that refuses a
// file it cannot fully trust, and the deterministic, atomic writer.
//
// lock imports none of mcpform's packages but policy. Package apply is its
// only caller that writes; plan, runtime and the CLI read.
package lock
