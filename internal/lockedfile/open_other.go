//go:build !unix

package lockedfile

import "os"

// openNonblocking opens path for reading; without O_NONBLOCK the check of
// the descriptor is all there is (Windows has no FIFOs in the file system).
func openNonblocking(path string) (*os.File, error) {
	return os.Open(path)
}
