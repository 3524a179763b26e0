package lockedfile

import (
	"fmt"
	"io"
	"os"
)

// ReadRegular reads the file at path, which whoever writes the repository
// may have placed (a lock, its signature file), refusing anything but a
// regular file (a symlink is followed to one) and a file of more than
// limit bytes before reading it: a FIFO would block, and /dev/zero or
// /dev/stdin would be read without end. A missing file is an error
// wrapping fs.ErrNotExist.
//
// The path is checked first, then the file is opened without blocking
// (O_NONBLOCK where there is one) and the descriptor checked again, so a
// FIFO put in the file's place between the check and the open cannot hang
// the reader either.
func ReadRegular(path string, limit int64) ([]byte, error) {
	// Refused before any open: opening a device can act (a terminal, a
	// tape) or fail with its own error.
	if st, err := os.Stat(path); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, notRegular(path, st.Mode())
	}
	f, err := openNonblocking(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		// Swapped in after the check above.
		return nil, notRegular(path, fi.Mode())
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return data, nil
}

func notRegular(path string, m os.FileMode) error {
	return fmt.Errorf("%s is not a regular file (%s); refusing to read it", path, m.Type())
}
