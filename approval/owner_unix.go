//go:build unix

package approval

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// safeOwner refuses a trust file or directory that a user other than the
// caller or root could write: owned by another user, or writable by its
// group or by others (a sticky directory like /tmp excepted for the
// directory: others cannot replace a file they do not own there).
func safeOwner(path string, fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if ok && st.Uid != 0 && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%s is owned by uid %d, not by you or root: a trust file must be under your control; refusing it", path, st.Uid)
	}
	perm := fi.Mode().Perm()
	if fi.IsDir() && fi.Mode()&fs.ModeSticky != 0 {
		return nil
	}
	if perm&0o022 != 0 {
		return fmt.Errorf("%s is writable by others (mode %04o): anyone who can write it can lower the trust policy; refusing it (chmod go-w %s)", path, perm, path)
	}
	return nil
}
