//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || windows)

package main

// isTerminal reports false: this platform offers mcpform no way to tell a
// terminal from a character device such as /dev/null, and an unneeded
// prompt or colour code in a log is worse than a plain one on a terminal.
func isTerminal(stream any) bool { return false }
