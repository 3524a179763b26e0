//go:build !unix

package runtime

import "os"

// Pollable returns f unchanged where the poller needs no help.
func Pollable(f *os.File) *os.File { return f }
