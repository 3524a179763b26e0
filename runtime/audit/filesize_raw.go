//go:build linux && (amd64 || arm64)

package audit

import (
	"os"
	"syscall"
	"unsafe"
)

// fileSize returns f's size, by a raw fstat: on these targets the system
// call fills syscall.Stat_t as it is laid out (elsewhere fstat64 does).
func fileSize(f *os.File) (int64, error) {
	var st syscall.Stat_t
	if _, _, e := syscall.RawSyscall(syscall.SYS_FSTAT, f.Fd(), uintptr(unsafe.Pointer(&st)), 0); e != 0 {
		return 0, &os.PathError{Op: "fstat", Path: f.Name(), Err: e}
	}
	return st.Size, nil
}
