//go:build (!unix && !windows) || aix

package lockedfile

import (
	"errors"
	"os"
)

// Lock fails here: this platform has no advisory lock mcpform uses, and a
// writer that needs one must not go on without it.
func Lock(*os.File) error { return errors.ErrUnsupported }

// TryLock fails as Lock does.
func TryLock(*os.File) (bool, error) { return false, errors.ErrUnsupported }

// Unlock has nothing to release.
func Unlock(*os.File) error { return nil }

// OpenDir opens directory dir; name is unused.
func OpenDir(dir, name string) (*os.File, error) { return os.Open(dir) }

// syncDir does nothing: no directory sync is known to work here.
func syncDir(string) error { return nil }
