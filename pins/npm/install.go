package npm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/internal/strictjson"
	"github.com/mcpform/mcpform/pins"
)

// The limits of an installed tree, against a tarball bomb (server-
// everything's tree is about 5,000 files and 60 MB).
const (
	// MaxFiles bounds the files, directories and links of one tree.
	MaxFiles = 200_000
	// MaxTreeBytes bounds the size of its files together.
	MaxTreeBytes = 2 << 30
)

// maxFiles and maxTreeBytes are the limits in force (tests lower them).
var maxFiles, maxTreeBytes int64 = MaxFiles, MaxTreeBytes

// A cache entry is cacheRoot/<lockfile digest>/, holding the npm project
// (tree/: package.json, package-lock.json, node_modules), the manifest of
// every file in it, and the stat cache that spares Verify re-hashing.
const (
	treeDir      = "tree"
	manifestName = "manifest.json"
	statName     = "stat.json"
	manifestFmt  = "mcpform npm manifest 1"
	statFmt      = "mcpform npm stat 1"
)

// manifest is the list of everything an installed tree holds.
type treeManifest struct {
	Format   string      `json:"format"`
	Lockfile string      `json:"lockfile"`
	Dirs     []string    `json:"dirs"`
	Files    []fileEntry `json:"files"`
	Links    []linkEntry `json:"links"`
}

type fileEntry struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

type linkEntry struct {
	Path   string `json:"path"`
	Target string `json:"target"`
}

// statCache maps a tree path to the stat key it had when its content
// last matched the manifest.
type statCache struct {
	Format string            `json:"format"`
	Keys   map[string]string `json:"keys"`
}

// EntryDir is the cache entry of pin under cacheRoot: named by the
// lockfile's digest, with "-scripts" after it for a tree installed with
// its install scripts run (what they leave is not the same tree).
func EntryDir(cacheRoot string, pin *Pin) string {
	if pin.RunScripts {
		return filepath.Join(cacheRoot, pin.Lockfile+"-scripts")
	}
	return filepath.Join(cacheRoot, pin.Lockfile)
}

// BinFile is the absolute file of pin's bin in its cache entry (the file
// Install returns), to start with node.
func BinFile(cacheRoot string, pin *Pin) (string, error) {
	root, err := filepath.Abs(EntryDir(cacheRoot, pin))
	if err != nil {
		return "", err
	}
	return filepath.Join(root, treeDir, "node_modules", filepath.FromSlash(pin.Package), filepath.FromSlash(pin.Bin)), nil
}

// Install puts pin's tree into its cache entry under cacheRoot, once: it
// reads the pinned lockfile from dir (where Resolve wrote it; its digest
// must be pin.Lockfile, and it is checked again with CheckLockfile), runs
// npm ci --ignore-scripts --omit=dev (its install scripts run only with
// pin.RunScripts) from it in a temporary directory
// under cacheRoot (npm checks every tarball against the lockfile's
// integrity), checks that each installed package is the name and version
// the lockfile says, walks the tree within MaxFiles and MaxTreeBytes
// (refusing links that leave it and special files), writes the manifest
// of every file's size and SHA-256, makes the files read-only and renames
// the directory into place. An entry already in place is verified instead
// (a second Install of one digest is a no-op, and needs no network). It
// returns the absolute path of the bin file.
func Install(ctx context.Context, pin *Pin, dir, cacheRoot string) (string, error) {
	bin, err := BinFile(cacheRoot, pin)
	if err != nil {
		return "", err
	}
	entry := EntryDir(cacheRoot, pin)
	if _, err := os.Lstat(filepath.Join(entry, manifestName)); err == nil {
		if err := Verify(cacheRoot, pin); err != nil {
			return "", fmt.Errorf("%w (the cache entry %s is damaged: remove it and install again)", err, entry)
		}
		return bin, nil
	}
	raw, err := readBounded(filepath.Join(dir, LockfileName))
	if err != nil {
		return "", err
	}
	if sum := sha256.Sum256(raw); hex.EncodeToString(sum[:]) != pin.Lockfile {
		return "", fmt.Errorf("the pinned lockfile %s changed since it was locked (sha256 %s…, locked %s…): nothing was installed; review it with mcpform plan", filepath.Join(dir, LockfileName), hex.EncodeToString(sum[:6]), pin.Lockfile[:min(12, len(pin.Lockfile))])
	}
	lf, err := CheckLockfile(raw, pin.Registry)
	if err != nil {
		return "", err
	}
	if err := lf.CheckTop(pin.Package, pin.Version, pin.Integrity); err != nil {
		return "", fmt.Errorf("%w: nothing was installed; review it with mcpform plan", err)
	}
	if err := os.MkdirAll(cacheRoot, 0o700); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(cacheRoot, ".install-")
	if err != nil {
		return "", err
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	project := filepath.Join(tmp, treeDir)
	if err := os.Mkdir(project, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(project, PackageJSON), packageJSON(pin.Package, pin.Version), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(project, LockfileName), raw, 0o644); err != nil {
		return "", err
	}
	if err := npmCommand(ctx, project, pin.Registry, pin.RunScripts, "ci"); err != nil {
		return "", err
	}
	if err := checkInstalled(project, lf); err != nil {
		return "", err
	}
	m, keys, err := walkTree(project)
	if err != nil {
		return "", err
	}
	m.Lockfile = pin.Lockfile
	rel := path.Join("node_modules", pin.Package, pin.Bin)
	if _, ok := slices.BinarySearchFunc(m.Files, rel, func(f fileEntry, p string) int { return strings.Compare(f.Path, p) }); !ok {
		return "", fmt.Errorf("%s@%s: its bin %s is not in the installed tree", escape.String(pin.Package), pin.Version, escape.String(pin.Bin))
	}
	if err := writeJSON(filepath.Join(tmp, manifestName), m); err != nil {
		return "", err
	}
	if err := writeJSON(filepath.Join(tmp, statName), statCache{Format: statFmt, Keys: keys}); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, entry); err != nil {
		// Another install of the same digest won: use its entry.
		if _, serr := os.Lstat(filepath.Join(entry, manifestName)); serr != nil {
			return "", err
		}
		if err := Verify(cacheRoot, pin); err != nil {
			return "", err
		}
		return bin, nil
	}
	done = true
	return bin, nil
}

// checkInstalled compares every installed package's package.json with
// its lockfile entry; an optional package npm left out (another platform)
// may be absent, nothing else.
func checkInstalled(project string, lf *Lockfile) error {
	for _, p := range lf.Packages {
		data, err := os.ReadFile(filepath.Join(project, filepath.FromSlash(p.Path), PackageJSON))
		if errors.Is(err, fs.ErrNotExist) {
			if _, derr := os.Lstat(filepath.Join(project, filepath.FromSlash(p.Path))); errors.Is(derr, fs.ErrNotExist) {
				continue // optional and left out, or omitted by npm
			}
		}
		if err != nil {
			return fmt.Errorf("installed %s: %w", escape.String(p.Path), err)
		}
		var got struct{ Name, Version string }
		if err := json.Unmarshal(data, &got); err != nil {
			return fmt.Errorf("installed %s: package.json: %w", escape.String(p.Path), err)
		}
		if got.Name != p.Name || got.Version != p.Version {
			return fmt.Errorf("installed %s is %s@%s, the lockfile pins %s@%s", escape.String(p.Path), escape.String(got.Name), escape.String(got.Version), escape.String(p.Name), escape.String(p.Version))
		}
	}
	return nil
}

// walkTree lists everything under project, within the limits: regular
// files by size and SHA-256 (made read-only), directories, and symlinks
// whose target stays inside project; anything else is refused. It returns
// the manifest and every path's stat key after the chmod.
func walkTree(project string) (*treeManifest, map[string]string, error) {
	m := &treeManifest{Format: manifestFmt}
	keys := map[string]string{}
	var count, total int64
	err := filepath.WalkDir(project, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(project, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if count++; count > maxFiles {
			return fmt.Errorf("the installed tree has more than %d files", maxFiles)
		}
		switch t := d.Type(); {
		case t.IsDir():
			m.Dirs = append(m.Dirs, rel)
		case t&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if filepath.IsAbs(target) || !localTo(path.Dir(rel), filepath.ToSlash(target)) {
				return fmt.Errorf("the installed tree's link %s points out of it (to %s)", escape.String(rel), escape.String(target))
			}
			m.Links = append(m.Links, linkEntry{Path: rel, Target: target})
			return nil
		case t.IsRegular():
			fi, err := d.Info()
			if err != nil {
				return err
			}
			if total += fi.Size(); total > maxTreeBytes {
				return fmt.Errorf("the installed tree is larger than %d MiB", maxTreeBytes>>20)
			}
			sum, size, err := hashPath(p)
			if err != nil {
				return err
			}
			if err := os.Chmod(p, fi.Mode().Perm()&^0o222); err != nil {
				return err
			}
			m.Files = append(m.Files, fileEntry{Path: rel, Size: size, SHA256: sum})
		default:
			return fmt.Errorf("the installed tree's %s is not a file, directory or link (%s)", escape.String(rel), t)
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		if k := pins.StatKey(fi); k != "" {
			keys[rel] = k
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	// WalkDir visits a directory before chmod-ing its files, which does
	// not change it; its key is taken at its visit and stays valid.
	return m, keys, nil
}

// localTo says a link target, relative to the link's directory dir (both
// slash paths relative to the tree), stays inside the tree.
func localTo(dir, target string) bool {
	j := path.Join(dir, target)
	return j != ".." && !strings.HasPrefix(j, "../") && !strings.HasPrefix(j, "/")
}

func hashPath(p string) (string, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

func writeJSON(p string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeAtomic(p, data)
}

// TreeError is a cache entry that is not what was installed: a file
// changed, missing or added, or a manifest that cannot be read. The
// server must not start.
type TreeError struct {
	// Entry is the cache entry's directory; Path the tree path ("" for
	// the entry itself); What says what differs.
	Entry, Path, What string
}

func (e *TreeError) Error() string {
	where := e.Entry
	if e.Path != "" {
		where = filepath.Join(e.Entry, treeDir, filepath.FromSlash(e.Path))
	}
	return fmt.Sprintf("the installed npm tree is not what was pinned: %s %s; nothing was started. Run mcpform install to install the pinned tree again (remove the entry first), or mcpform plan to review the pin", escape.String(where), e.What)
}

// outerModules returns the first node_modules directory (or a link to one)
// in entry or above it: node looks a package up in every node_modules from
// the requiring file's directory to the root, so one there would serve a
// package the pinned tree does not hold.
func outerModules(entry string) (string, bool) {
	dir, err := filepath.Abs(entry)
	if err != nil {
		return "", false
	}
	for {
		p := filepath.Join(dir, "node_modules")
		if _, err := os.Lstat(p); err == nil {
			return p, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// GlobalModules returns the first of node's global folders that exists:
// $HOME/.node_modules and $HOME/.node_libraries for the HOME the server
// gets ("" when it gets none), and PREFIX/lib/node for the node binary
// node (its real file). Node searches them for a package no node_modules
// on the way up holds, so one there would serve a package the pinned tree
// lacks.
func GlobalModules(home, node string) (string, bool) {
	var dirs []string
	if home != "" {
		dirs = append(dirs, filepath.Join(home, ".node_modules"), filepath.Join(home, ".node_libraries"))
	}
	if node != "" {
		dirs = append(dirs, filepath.Join(filepath.Dir(filepath.Dir(node)), "lib", "node"))
	}
	for _, d := range dirs {
		if _, err := os.Lstat(d); err == nil {
			return d, true
		}
	}
	return "", false
}

// CheckGlobals refuses a start whose node would search a global folder
// that exists (GlobalModules): the HOME the server gets, when its env
// passes HOME (getenv reads mcpform's), and the node on PATH, which run
// starts.
func CheckGlobals(env []string, getenv func(string) string) error {
	home := ""
	if slices.Contains(env, "HOME") {
		home = getenv("HOME")
	}
	node := ""
	if p, err := exec.LookPath("node"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			node = real
		}
	}
	if d, ok := GlobalModules(home, node); ok {
		return fmt.Errorf("node would find packages the pinned tree lacks in %s, one of its global folders, outside the tree the lock pins: remove it, or take HOME out of the server's env if it is under HOME", escape.String(d))
	}
	return nil
}

// UnpinnedEnv are the environment variables that make node load code from
// outside the pinned tree (NODE_OPTIONS=--require …, NODE_PATH): a server
// started from a pinned tree must not be given them.
var UnpinnedEnv = []string{"NODE_OPTIONS", "NODE_PATH"}

// CheckEnv refuses env names (a server's env list) that would load code
// the lock does not pin into its node (UnpinnedEnv).
func CheckEnv(names []string) error {
	for _, n := range names {
		if slices.Contains(UnpinnedEnv, n) {
			return fmt.Errorf("env passes %s, with which node loads code from outside the pinned tree (a --require, a module path), code the lock does not pin: remove %s from the server's env", n, n)
		}
	}
	return nil
}

// Verify checks pin's cache entry before a start, without network: every
// file of the manifest is there, regular, with its size and SHA-256 (a
// file whose stat key, device, inode, size, mtime and ctime, is what it
// was when it last matched is not hashed again), every link points where
// it did, and no directory gained or lost an entry (a directory whose key
// is unchanged is not read). The first difference is a *TreeError naming
// the file. Keys of files it had to hash, and that matched, are saved for
// the next start.
func Verify(cacheRoot string, pin *Pin) error {
	entry := EntryDir(cacheRoot, pin)
	fail := func(p, what string) error { return &TreeError{Entry: entry, Path: p, What: what} }
	data, err := os.ReadFile(filepath.Join(entry, manifestName))
	if err != nil {
		return fail("", fmt.Sprintf("has no manifest (%v): it was never installed", err))
	}
	var m treeManifest
	if err := strictjson.Check(data); err != nil {
		return fail("", "has a damaged manifest")
	}
	if err := json.Unmarshal(data, &m); err != nil || m.Format != manifestFmt {
		return fail("", "has a manifest of another format")
	}
	if m.Lockfile != pin.Lockfile {
		return fail("", "is the tree of another lockfile")
	}
	if dir, ok := outerModules(entry); ok {
		return &TreeError{Entry: entry, What: fmt.Sprintf("lies below %s, where node would find a package the tree lacks (a require of an optional dependency resolves there, outside the pinned tree): remove it", escape.String(dir))}
	}
	sc := statCache{Keys: map[string]string{}}
	if data, err := os.ReadFile(filepath.Join(entry, statName)); err == nil {
		var c statCache
		if json.Unmarshal(data, &c) == nil && c.Format == statFmt && c.Keys != nil {
			sc = c
		}
	}
	project := filepath.Join(entry, treeDir)
	changed := false
	remember := func(rel string, fi os.FileInfo) {
		if k := pins.StatKey(fi); k != "" && sc.Keys[rel] != k {
			sc.Keys[rel] = k
			changed = true
		}
	}
	var children map[string][]string
	for _, d := range m.Dirs {
		p := filepath.Join(project, filepath.FromSlash(d))
		fi, err := os.Lstat(p)
		if err != nil || !fi.IsDir() {
			return fail(d, "is missing or no longer a directory")
		}
		if k := pins.StatKey(fi); k != "" && k == sc.Keys[d] {
			continue
		}
		if children == nil {
			children = childrenOf(&m)
		}
		names, err := readNames(p)
		if err != nil {
			return fail(d, fmt.Sprintf("cannot be read: %v", err))
		}
		want := children[d]
		if !slices.Equal(names, want) {
			return fail(d, "gained or lost entries: "+diffNames(want, names))
		}
		remember(d, fi)
	}
	for _, f := range m.Files {
		p := filepath.Join(project, filepath.FromSlash(f.Path))
		fi, err := os.Lstat(p)
		if err != nil {
			return fail(f.Path, "is missing")
		}
		if !fi.Mode().IsRegular() {
			return fail(f.Path, "is no longer a regular file")
		}
		if fi.Size() != f.Size {
			return fail(f.Path, fmt.Sprintf("changed size (%d bytes, installed %d)", fi.Size(), f.Size))
		}
		if k := pins.StatKey(fi); k != "" && k == sc.Keys[f.Path] {
			continue
		}
		sum, _, err := hashPath(p)
		if err != nil {
			return fail(f.Path, fmt.Sprintf("cannot be read: %v", err))
		}
		if sum != f.SHA256 {
			return fail(f.Path, fmt.Sprintf("changed (sha256 %s…, installed %s…)", sum[:12], f.SHA256[:min(12, len(f.SHA256))]))
		}
		if after, err := os.Lstat(p); err == nil && pins.StatKey(after) == pins.StatKey(fi) {
			remember(f.Path, fi)
		}
	}
	for _, l := range m.Links {
		target, err := os.Readlink(filepath.Join(project, filepath.FromSlash(l.Path)))
		if err != nil {
			return fail(l.Path, "is missing or no longer a link")
		}
		if target != l.Target {
			return fail(l.Path, fmt.Sprintf("points to %s, installed %s", escape.String(target), escape.String(l.Target)))
		}
	}
	if changed {
		sc.Format = statFmt
		_ = writeJSON(filepath.Join(entry, statName), sc) // costs the next start a hash at worst
	}
	return nil
}

// childrenOf lists each manifest directory's entries, sorted.
func childrenOf(m *treeManifest) map[string][]string {
	c := map[string][]string{}
	add := func(p string) {
		if p == "." {
			return
		}
		c[path.Dir(p)] = append(c[path.Dir(p)], path.Base(p))
	}
	for _, d := range m.Dirs {
		add(d)
	}
	for _, f := range m.Files {
		add(f.Path)
	}
	for _, l := range m.Links {
		add(l.Path)
	}
	for k := range c {
		slices.Sort(c[k])
	}
	return c
}

func readNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	return names, nil
}

// diffNames says which names were added and which removed.
func diffNames(want, got []string) string {
	var b bytes.Buffer
	for _, n := range got {
		if !slices.Contains(want, n) {
			fmt.Fprintf(&b, "+%s ", escape.String(n))
		}
	}
	for _, n := range want {
		if !slices.Contains(got, n) {
			fmt.Fprintf(&b, "-%s ", escape.String(n))
		}
	}
	return strings.TrimSpace(b.String())
}
