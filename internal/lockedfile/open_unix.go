//go:build unix

package lockedfile

import (
	"os"
	"syscall"
)

// openNonblocking opens path for reading with O_NONBLOCK: the open of a
// FIFO returns at once instead of waiting for a writer. Reads of a
// regular file are unaffected by the flag.
func openNonblocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
