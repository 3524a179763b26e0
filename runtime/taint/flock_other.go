//go:build !unix

package taint

import (
	"errors"
	"os"
)

// Without flock the store cannot keep concurrent runs from losing each
// other's taint: fail closed rather than track it badly.
func lockFile(*os.File) error {
	return errors.New("taint state needs advisory file locks, which this platform lacks")
}

func owner(os.FileInfo) (int, bool) { return 0, false }
