//go:build !unix

package surface

import "errors"

func mkfifo(string) error { return errors.New("no FIFOs here") }
