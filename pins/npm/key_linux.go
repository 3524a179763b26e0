package npm

import (
	"fmt"
	"os"
	"syscall"
)

// statKey is what changes when a file is replaced or written: device and
// inode, size, mtime, and ctime, which the kernel sets on every write,
// chmod and rename and no call can set back (the pins package keys its
// cache the same way).
func statKey(fi os.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d %d %d %d.%09d %d.%09d", st.Dev, st.Ino, st.Size, st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec)
}
