package pins

import (
	"fmt"
	"os"
	"syscall"
)

// StatKey is what changes when a file is replaced or written: device and
// inode (another file), size, mtime, and ctime, which the kernel sets on
// every write and chmod and no call can set back.
func StatKey(fi os.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d %d %d %d.%09d %d.%09d", st.Dev, st.Ino, st.Size, st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec)
}
