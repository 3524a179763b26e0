package lockedfile

import (
	"fmt"
	"io"
)

// ReadRegular reads the file at path, which whoever writes the repository
// may have placed (a lock, its signature file), refusing anything but a
// regular file (a symlink is followed to one) and a file of more than
// limit bytes before reading it: a FIFO would block, and /dev/zero or
// /dev/stdin would be read without end. A missing file is an error
// wrapping fs.ErrNotExist.
//
// The file is opened without blocking (O_NONBLOCK where there is one) and
// the descriptor is what is checked, so a FIFO put in the file's place
// between a check and the open cannot hang the reader either.
func ReadRegular(path string, limit int64) ([]byte, error) {
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
		return nil, fmt.Errorf("%s is not a regular file (%s); refusing to read it", path, fi.Mode().Type())
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
