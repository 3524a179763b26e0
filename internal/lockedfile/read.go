package lockedfile

import (
	"fmt"
	"io"
	"os"
)

// ReadRegular reads the file at path, which whoever writes the repository
// may have placed (a lock, its signature file), refusing anything but a
// regular file (a symlink is followed to one) before opening it, and a
// file of more than limit bytes before reading it: a FIFO would block the
// open, and /dev/zero or /dev/stdin would be read without end. A missing
// file is an error wrapping fs.ErrNotExist.
func ReadRegular(path string, limit int64) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s); refusing to read it", path, st.Mode().Type())
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s); refusing to read it", path, fi.Mode().Type())
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
