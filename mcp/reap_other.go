//go:build !linux

package mcp

import "time"

// startServer runs start: where there is no child subreaper, a
// descendant that leaves its server's process group is not found.
func startServer(start func() int) { start() }

// endTree kills what is left of the server's process group.
func endTree(pid int, grace time.Duration) { killGroup(pid) }
