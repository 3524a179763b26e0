//go:build unix

package taint

import (
	"os"
	"syscall"
)

// owner returns the uid owning the file fi describes.
func owner(fi os.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
