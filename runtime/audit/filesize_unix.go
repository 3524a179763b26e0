//go:build unix && !(linux && (amd64 || arm64))

package audit

import (
	"os"
	"syscall"
)

// fileSize returns f's size. syscall.Fstat picks the right system call
// (fstat64 on 32-bit Linux and on Darwin) for syscall.Stat_t's layout.
func fileSize(f *os.File) (int64, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return 0, &os.PathError{Op: "fstat", Path: f.Name(), Err: err}
	}
	return st.Size, nil
}
