package lockedfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// WriteFile replaces the file at path with data, with permissions perm
// (exactly: the umask does not apply), atomically: data goes to a temporary
// file beside path (see IsTemp), which is synced, closed and renamed over
// path, and then the directory is synced so the rename survives a crash
// ("calling fsync() on the file does not necessarily ensure that the entry
// in the directory containing the file has also reached disk", fsync(2)).
// On an error the temporary file is removed and path is as it was, unless
// only the directory's sync failed.
//
// beforeRename, when not nil, is called with the temporary file's name
// once it is written, synced and closed, just before the rename: it is for
// tests that stop or kill a writer at that moment. Callers pass nil.
//
// WriteFile takes no lock: writers that must not overwrite each other's
// changes hold one around their read and WriteFile.
func WriteFile(path string, data []byte, perm fs.FileMode, beforeRename func(tmp string)) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, tempPrefix(path)+"*")
	if err != nil {
		return fmt.Errorf("creating a temporary file for %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", tmp.Name(), err)
	}
	if err = tmp.Chmod(perm); err != nil {
		return fmt.Errorf("writing %s: %w", tmp.Name(), err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", tmp.Name(), err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", tmp.Name(), err)
	}
	if beforeRename != nil {
		beforeRename(tmp.Name())
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replacing %s: %w", path, err)
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("syncing the directory of %s: %w", path, err)
	}
	return nil
}

// tempPrefix is how the names of path's temporary files begin;
// os.CreateTemp ends each with a random decimal number.
func tempPrefix(path string) string { return "." + filepath.Base(path) + ".tmp-" }

// IsTemp reports whether name, a name in path's directory, is one of
// WriteFile's temporary files for path: a dot, path's base name, ".tmp-"
// and then only decimal digits, as os.CreateTemp makes them.
func IsTemp(path, name string) bool {
	suffix, ok := strings.CutPrefix(name, tempPrefix(path))
	if !ok || suffix == "" {
		return false
	}
	for i := 0; i < len(suffix); i++ {
		if suffix[i] < '0' || suffix[i] > '9' {
			return false
		}
	}
	return true
}

// RemoveTemps removes the temporary files of path that writers killed in
// WriteFile left in path's directory. Call it only holding a lock that
// every writer of path holds from before its WriteFile until it returns:
// then any such file found belongs to no live writer. Only regular files
// whose names IsTemp accepts are touched. Removal is best effort: a
// temporary file is never read as path, and the write that follows fails
// on its own if the directory is not writable.
func RemoveTemps(path string) {
	dir := filepath.Dir(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.Type().IsRegular() && IsTemp(path, e.Name()) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
