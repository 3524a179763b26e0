//go:build !unix

package procfd

import "errors"

// Inheritable reports errors.ErrUnsupported where descriptors are not
// inherited by number.
func Inheritable(dir string) ([]FD, error) { return nil, errors.ErrUnsupported }
