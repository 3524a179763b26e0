package main

import (
	"fmt"

	"github.com/mcpform/mcpform/lock"
)

// writeLockNotes prints what the loader had to say of a lock it accepted
// (lock.File.Notes: an entry without a configDigest, whose command,
// environment and policy no digest checks) as "Note: …" lines on stderr,
// so that stdout stays the command's output. A nil lock has none.
func writeLockNotes(io *stdio, lf *lock.File) {
	if lf == nil {
		return
	}
	for _, n := range lf.Notes {
		fmt.Fprintf(io.err, "Note: %s\n", n)
	}
}
