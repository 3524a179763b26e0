//go:build !unix

package audit

import "os"

// lockFile is a no-op where flock is missing: appends from one process are
// still serialised by Log's mutex.
func lockFile(*os.File) error { return nil }

func unlockFile(*os.File) error { return nil }

// fileSize returns f's size.
func fileSize(f *os.File) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// appendAll writes b to f, opened with O_APPEND.
func appendAll(f *os.File, b []byte) error {
	_, err := f.Write(b)
	return err
}
