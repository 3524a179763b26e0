package main

import (
	"os"

	"golang.org/x/term"
)

// isTerminal reports whether stream (a reader or a writer) is a terminal: one
// a person can answer on, or watch output colour on. A terminal answers the
// terminal-attributes request (a console has a console mode on Windows);
// /dev/null, also a character device, does not. It is the one test of a
// terminal: prompting, colour and the progress line all ask it, each about
// the stream it reads or writes.
func isTerminal(stream any) bool {
	f, ok := stream.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
