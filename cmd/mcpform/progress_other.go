//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package main

import "os"

// termWidth is 0 (not known) where there is no window-size ioctl: the
// status line then keeps to 80 columns.
func termWidth(*os.File) int { return 0 }
