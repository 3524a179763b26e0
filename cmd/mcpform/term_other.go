//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package main

import (
	"io"
	"os"
)

// isTerminal reports whether r is a character device: the best this
// platform offers without a console API.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
