package main

import (
	"os"

	"golang.org/x/sys/windows"
)

// isTerminal reports whether stream (a reader or a writer) is a console: a
// console handle has a console mode; NUL, a pipe and a file do not.
func isTerminal(stream any) bool {
	f, ok := stream.(*os.File)
	if !ok {
		return false
	}
	var mode uint32
	return windows.GetConsoleMode(windows.Handle(f.Fd()), &mode) == nil
}
