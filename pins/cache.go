package pins

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Cache remembers the digests of files by what the kernel says of them
// (StatKey: device, inode, size, mtime and ctime), so that a run does not
// hash a 100 MB node binary on every start. A file written since, even
// with its mtime set back, has another ctime and is hashed again. A nil
// *Cache hashes every time.
//
// The cache trusts its directory: whoever can write mcpform's state
// directory can forge an entry (and could replace mcpform itself). The
// sandbox keeps servers out of it.
type Cache struct{ dir string }

// NewCache keeps its entries in dir (created on first write, mode 0700).
func NewCache(dir string) *Cache { return &Cache{dir: dir} }

// cacheFormat heads every entry; an entry of another format is ignored.
const cacheFormat = "mcpform pins cache 1"

// sum is the digest of the regular file p, from the cache when the file's
// key matches the entry's, else hashed (and the entry written).
func (c *Cache) sum(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	before, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !before.Mode().IsRegular() {
		return "", fmt.Errorf("%s: %w", p, errNotRegular)
	}
	key := StatKey(before)
	entry := c.entryPath(p)
	if entry != "" && key != "" {
		if data, err := os.ReadFile(entry); err == nil {
			if lines := strings.Split(string(data), "\n"); len(lines) == 5 && lines[0] == cacheFormat && lines[1] == p && lines[2] == key && sha256Hex(lines[3]) {
				return lines[3], nil
			}
		}
	}
	sum, err := hashFile(f)
	if err != nil {
		return "", err
	}
	if entry != "" && key != "" {
		// Only a file that did not change while it was read is
		// remembered.
		if after, err := f.Stat(); err == nil && StatKey(after) == key {
			c.write(entry, cacheFormat+"\n"+p+"\n"+key+"\n"+sum+"\n")
		}
	}
	return sum, nil
}

// entryPath is where the cache keeps p's entry; "" without a cache.
func (c *Cache) entryPath(p string) string {
	if c == nil || c.dir == "" {
		return ""
	}
	h := sha256.Sum256([]byte(p))
	return filepath.Join(c.dir, hex.EncodeToString(h[:16]))
}

// write replaces an entry atomically; a cache that cannot be written only
// costs the next start a hash.
func (c *Cache) write(entry, content string) {
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return
	}
	tmp, err := os.CreateTemp(c.dir, ".tmp-*")
	if err != nil {
		return
	}
	_, werr := tmp.WriteString(content)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), entry) != nil {
		os.Remove(tmp.Name())
	}
}

func sha256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}
