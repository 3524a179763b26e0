//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// isTerminal reports whether stream (a reader or a writer) is a terminal: one
// a person can answer on, or watch output colour on. A terminal answers the
// terminal-attributes ioctl; /dev/null, also a character device, does not.
// It is the one test of a terminal: prompting, colour and the progress line
// all ask it, each about the stream it reads or writes.
func isTerminal(stream any) bool {
	f, ok := stream.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), ioctlGetTermios)
	return err == nil
}
