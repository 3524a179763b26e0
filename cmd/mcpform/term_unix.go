//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// isTerminal reports whether r is a terminal a person can answer on. A
// terminal answers the terminal-attributes ioctl; /dev/null, also a
// character device, does not.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), ioctlGetTermios)
	return err == nil
}
