package pypi

import (
	"bufio"
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
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/internal/lockedfile"
	"github.com/mcpform/mcpform/internal/strictjson"
	"github.com/mcpform/mcpform/pins"
)

// The limits of an installed tree, against a wheel bomb.
const (
	// MaxFiles bounds the files, directories and links of one tree.
	MaxFiles = 200_000
	// MaxTreeBytes bounds the size of its files together.
	MaxTreeBytes = 2 << 30
)

// maxFiles and maxTreeBytes are the limits in force (tests lower them).
var maxFiles, maxTreeBytes int64 = MaxFiles, MaxTreeBytes

// A cache entry is cacheRoot/<requirements digest>/, holding the venv
// (tree/), a copy of the requirements file, the manifest of every file of
// the venv, and the stat cache that spares Verify re-hashing. Installs of
// one digest take the lock cacheRoot/<digest>.lock.
const (
	treeDir      = "tree"
	manifestName = "manifest.json"
	statName     = "stat.json"
	manifestFmt  = "mcpform pypi manifest 1"
	statFmt      = "mcpform pypi stat 1"
)

type treeManifest struct {
	Format       string      `json:"format"`
	Requirements string      `json:"requirements"`
	Script       string      `json:"script"`
	EntryPoint   string      `json:"entryPoint"`
	Dirs         []string    `json:"dirs"`
	Files        []fileEntry `json:"files"`
	Links        []linkEntry `json:"links"`
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

type statCache struct {
	Format string            `json:"format"`
	Keys   map[string]string `json:"keys"`
}

// Installed says whether pin's cache entry is complete (it has its
// manifest, written last), so that Verify, not Install, is what a start
// needs. An entry without one is absent or an install that did not finish
// (or is under way): Install waits for the entry's lock and finishes it.
func Installed(cacheRoot string, pin *Pin) bool {
	_, err := os.Lstat(filepath.Join(EntryDir(cacheRoot, pin), manifestName))
	return err == nil
}

// EntryDir is the cache entry of pin under cacheRoot.
func EntryDir(cacheRoot string, pin *Pin) string {
	return filepath.Join(cacheRoot, pin.Requirements)
}

// interpreterLink is a venv's own interpreter link, the one kind of link
// that may point out of the tree (to the base interpreter, by an absolute
// path).
var interpreterLink = regexp.MustCompile(`^bin/python(3(\.[0-9]+)?)?$`)

// entryPointRef is a console script's object reference, module:attr, both
// dotted Python identifiers (ASCII), without extras.
var entryPointRef = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)

// ValidEntryPoint says whether ref is an entry point Argv can start.
func ValidEntryPoint(ref string) bool { return len(ref) <= 400 && entryPointRef.MatchString(ref) }

// ValidScript says whether name is a console script name Argv can start.
func ValidScript(name string) bool { return validScriptName(name) == nil }

// Argv is what run starts for pin's tree in cacheRoot, before the
// server's own arguments: the venv's interpreter, isolated (-I: no PYTHON*
// variables, no user site-packages, neither the working directory nor a
// script's directory on sys.path, so a file beside the lock cannot shadow
// a pinned module), without the site module (-S: no .pth file of the tree
// runs code at start-up, so a package nothing imports stays inert; the
// launcher puts the venv's site-packages on sys.path itself), writing no
// bytecode (-B: the tree stays as its manifest says), running a fixed
// launcher that imports the console
// script's entry point and calls it, as the script pip wrote would. Not
// the script file itself: its first line holds the venv's absolute path,
// which differs from machine to machine, and through its shebang it would
// start without -I. The pins package pins the interpreter's real file.
func Argv(cacheRoot string, pin *Pin) ([]string, error) {
	if !ValidEntryPoint(pin.EntryPoint) || !ValidScript(pin.Script) {
		return nil, fmt.Errorf("the pin's console script %s (%s) is not one mcpform can start", escape.String(pin.Script), escape.String(pin.EntryPoint))
	}
	root, err := filepath.Abs(EntryDir(cacheRoot, pin))
	if err != nil {
		return nil, err
	}
	sp, err := sitePackages(filepath.Join(root, treeDir))
	if err != nil {
		return nil, err
	}
	mod, attr, _ := strings.Cut(pin.EntryPoint, ":")
	// Both are checked identifiers and the script a checked name: none
	// can hold a quote or a backslash. The site-packages path is quoted
	// (%q's escapes are Python's too).
	launcher := fmt.Sprintf("import sys\nsys.path.append(%q)\nfrom importlib import import_module\nsys.argv[0] = '%s'\nf = import_module('%s')\nfor a in '%s'.split('.'):\n    f = getattr(f, a)\nsys.exit(f())\n", sp, pin.Script, mod, attr)
	return []string{filepath.Join(root, treeDir, "bin", "python"), "-I", "-S", "-B", "-c", launcher}, nil
}

// ReadPaths are the directories a sandboxed server started by Argv must
// be granted for reading: the cache entry. The sandbox grants the venv's
// root and its interpreter's real file read and execute on its own (a
// program in a venv's bin brings the venv, runtime/sandbox); the base
// interpreter's installation is not granted here, since a read grant is
// mounted noexec and would hide its shared libraries from the loader (a
// system python under /usr is covered by the sandbox's system
// directories).
func ReadPaths(cacheRoot string, pin *Pin) []string {
	entry, err := filepath.Abs(EntryDir(cacheRoot, pin))
	if err != nil {
		return nil
	}
	return []string{entry}
}

// Install puts pin's tree into its cache entry under cacheRoot, once: it
// reads the requirements file from dir (where Resolve wrote it; its
// digest must be pin.Requirements, and it is checked again with
// CheckRequirements, the top package at pin's version and wheel digest),
// and, under the entry's lock, creates the venv at its final path
// (python3 -m venv --without-pip), has pip install exactly the file into
// it (pip --python VENV/bin/python install --no-deps --require-hashes
// --only-binary=:all:: every wheel checked against its sha256, nothing
// built, nothing resolved), checks that the installed distributions are
// exactly the file's names and versions, picks the console script (the
// one pin names, else the one named like the package, else the only one),
// walks the tree within MaxFiles and MaxTreeBytes (links must stay in it
// but for the interpreter links; special files are refused), makes the
// files read-only and writes the manifest last. An entry that has a
// manifest is verified instead (a second Install of one digest is a no-op
// and needs no index); one without is what a failed install left, and is
// removed first. It returns pin with Script and EntryPoint filled.
func Install(ctx context.Context, pin *Pin, dir, cacheRoot string, opts Options) (*Pin, error) {
	raw, err := readBounded(filepath.Join(dir, RequirementsName), MaxRequirementsBytes)
	if err != nil {
		return nil, err
	}
	if sum := sha256.Sum256(raw); hex.EncodeToString(sum[:]) != pin.Requirements {
		return nil, fmt.Errorf("the pinned requirements file %s changed since it was locked (sha256 %s…, locked %s…): nothing was installed; review it with mcpform plan",
			filepath.Join(dir, RequirementsName), hex.EncodeToString(sum[:6]), pin.Requirements[:min(12, len(pin.Requirements))])
	}
	reqs, err := CheckRequirements(raw)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(reqs, func(r Requirement) bool { return r.Name == pin.Package })
	if i < 0 || reqs[i].Version != pin.Version || reqs[i].SHA256 != pin.SHA256 {
		return nil, fmt.Errorf("the pinned requirements file does not pin %s==%s with the wheel sha256 the lock records: nothing was installed; review it with mcpform plan", escape.String(pin.Package), escape.String(pin.Version))
	}
	if err := os.MkdirAll(cacheRoot, 0o700); err != nil {
		return nil, err
	}
	lf, err := os.OpenFile(EntryDir(cacheRoot, pin)+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	defer lf.Close()
	if err := lockedfile.Lock(lf); err != nil {
		return nil, fmt.Errorf("locking the cache entry: %w", err)
	}
	defer lockedfile.Unlock(lf)
	entry := EntryDir(cacheRoot, pin)
	if _, err := os.Lstat(filepath.Join(entry, manifestName)); err == nil {
		out, err := verified(cacheRoot, pin)
		if err != nil {
			return nil, fmt.Errorf("%w (the cache entry %s is damaged: remove it and install again)", err, entry)
		}
		return out, nil
	}
	// No manifest: nothing, or what an install that did not finish left.
	if err := removeAll(entry); err != nil {
		return nil, err
	}
	out, err := install(ctx, pin, raw, reqs, entry, opts)
	if err != nil {
		removeAll(entry)
		return nil, err
	}
	return out, nil
}

func install(ctx context.Context, pin *Pin, raw []byte, reqs []Requirement, entry string, opts Options) (*Pin, error) {
	if err := os.Mkdir(entry, 0o755); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(entry)
	if err != nil {
		return nil, err
	}
	venv := filepath.Join(abs, treeDir)
	if err := runPython(ctx, opts, abs, "-m", "venv", "--without-pip", venv); err != nil {
		return nil, err
	}
	reqPath := filepath.Join(abs, RequirementsName)
	if err := os.WriteFile(reqPath, raw, 0o444); err != nil {
		return nil, err
	}
	if _, err := runPip(ctx, opts, abs, filepath.Join(venv, "bin", "python"), "install", "--no-deps", "--require-hashes", "--only-binary=:all:",
		"--no-warn-script-location", "--no-cache-dir", "-r", reqPath); err != nil {
		return nil, err
	}
	topInfo, err := checkInstalled(venv, reqs, pin.Package)
	if err != nil {
		return nil, err
	}
	out := *pin
	out.Tree = reqs
	if out.Script, out.EntryPoint, err = pickScript(filepath.Join(topInfo, "entry_points.txt"), pin); err != nil {
		return nil, err
	}
	m, keys, err := walkTree(venv)
	if err != nil {
		return nil, err
	}
	m.Requirements, m.Script, m.EntryPoint = pin.Requirements, out.Script, out.EntryPoint
	if err := writeJSON(filepath.Join(abs, statName), statCache{Format: statFmt, Keys: keys}); err != nil {
		return nil, err
	}
	// The manifest last: its presence says the entry is complete.
	if err := writeJSON(filepath.Join(abs, manifestName), m); err != nil {
		return nil, err
	}
	return &out, nil
}

// removeAll removes an entry, making its read-only files' directories
// writable first.
func removeAll(p string) error {
	if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(q, 0o755)
		}
		return nil
	})
	return os.RemoveAll(p)
}

func runPython(ctx context.Context, opts Options, dir string, args ...string) error {
	return runCmd(ctx, dir, opts.python(), args...)
}

// sitePackages is the venv's one site-packages directory.
func sitePackages(venv string) (string, error) {
	dirs, err := filepath.Glob(filepath.Join(venv, "lib", "python*", "site-packages"))
	if err != nil || len(dirs) != 1 {
		return "", fmt.Errorf("the venv %s has no single lib/python*/site-packages (found %d)", venv, len(dirs))
	}
	return dirs[0], nil
}

// checkInstalled compares the venv's installed distributions (every
// *.dist-info's METADATA Name and Version) with reqs: the same set, no
// more, no fewer. It returns the top package's dist-info directory.
func checkInstalled(venv string, reqs []Requirement, top string) (string, error) {
	sp, err := sitePackages(venv)
	if err != nil {
		return "", err
	}
	infos, err := filepath.Glob(filepath.Join(sp, "*.dist-info"))
	if err != nil {
		return "", err
	}
	want := map[string]string{}
	for _, r := range reqs {
		want[r.Name] = r.Version
	}
	seen := map[string]bool{}
	topInfo := ""
	for _, d := range infos {
		name, version, err := readMetadata(filepath.Join(d, "METADATA"))
		if err != nil {
			return "", fmt.Errorf("installed %s: %w", escape.String(filepath.Base(d)), err)
		}
		n := Normalize(name)
		v, ok := want[n]
		switch {
		case !ok:
			return "", fmt.Errorf("the venv holds %s==%s, which the requirements file does not pin", escape.String(n), escape.String(version))
		case v != version:
			return "", fmt.Errorf("the venv holds %s==%s, the requirements file pins %s", escape.String(n), escape.String(version), escape.String(v))
		case seen[n]:
			return "", fmt.Errorf("the venv holds %s twice", escape.String(n))
		}
		seen[n] = true
		if n == top {
			topInfo = d
		}
	}
	for _, r := range reqs {
		if !seen[r.Name] {
			return "", fmt.Errorf("pip did not install %s==%s", escape.String(r.Name), escape.String(r.Version))
		}
	}
	return topInfo, nil
}

// readMetadata reads Name and Version from a METADATA file's headers.
func readMetadata(p string) (name, version string, err error) {
	data, err := readBounded(p, 4<<20)
	if err != nil {
		return "", "", err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if l == "" {
			break // the headers end
		}
		if v, ok := strings.CutPrefix(l, "Name: "); ok && name == "" {
			name = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(l, "Version: "); ok && version == "" {
			version = strings.TrimSpace(v)
		}
	}
	if name == "" || version == "" {
		return "", "", errors.New("METADATA has no Name or no Version")
	}
	return name, version, nil
}

// pickScript reads the top package's console scripts and picks the one
// pin names (and, when pin has an entry point, checks it is that one),
// else the one named like the package, else the only one.
func pickScript(entryPoints string, pin *Pin) (script, ref string, err error) {
	data, err := readBounded(entryPoints, 1<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return "", "", fmt.Errorf("%s==%s declares no console scripts (no entry_points.txt): it has no command to start", escape.String(pin.Package), escape.String(pin.Version))
	}
	if err != nil {
		return "", "", err
	}
	scripts := map[string]string{}
	var names []string
	section := ""
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, ";") {
			continue
		}
		if strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]") {
			section = strings.TrimSpace(l[1 : len(l)-1])
			continue
		}
		if section != "console_scripts" {
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if _, dup := scripts[k]; !dup {
			names = append(names, k)
		}
		scripts[k] = v
	}
	slices.Sort(names)
	switch {
	case pin.Script != "":
		script = pin.Script
	case len(names) == 1:
		script = names[0]
	default:
		for _, n := range names {
			if Normalize(n) == pin.Package {
				script = n
			}
		}
	}
	if script == "" {
		return "", "", fmt.Errorf("%s==%s has the console scripts %s and none is named like the package: name the one to run (uvx --from %s==%s SCRIPT)",
			escape.String(pin.Package), escape.String(pin.Version), escape.String(strings.Join(names, ", ")), escape.String(pin.Package), escape.String(pin.Version))
	}
	ref, ok := scripts[script]
	if !ok {
		return "", "", fmt.Errorf("%s==%s has no console script %s (it has %s)", escape.String(pin.Package), escape.String(pin.Version), escape.String(script), escape.String(strings.Join(names, ", ")))
	}
	if !ValidScript(script) || !ValidEntryPoint(ref) {
		return "", "", fmt.Errorf("%s==%s: its console script %s = %s is not one mcpform can start (module:function, no extras)", escape.String(pin.Package), escape.String(pin.Version), escape.String(script), escape.String(ref))
	}
	if pin.EntryPoint != "" && pin.EntryPoint != ref {
		return "", "", fmt.Errorf("%s==%s: its console script %s is %s, the lock records %s", escape.String(pin.Package), escape.String(pin.Version), escape.String(script), escape.String(ref), escape.String(pin.EntryPoint))
	}
	return script, ref, nil
}

// walkTree lists everything under venv, within the limits: regular files
// by size and SHA-256 (made read-only), directories, links that stay
// inside venv, and the interpreter links (bin/python, bin/python3,
// bin/python3.N) to an absolute base interpreter; anything else is
// refused. It returns the manifest and every path's stat key after the
// chmod.
func walkTree(venv string) (*treeManifest, map[string]string, error) {
	m := &treeManifest{Format: manifestFmt}
	keys := map[string]string{}
	var count, total int64
	err := filepath.WalkDir(venv, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(venv, p)
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
			st := filepath.ToSlash(target)
			switch {
			case path.IsAbs(st) && interpreterLink.MatchString(rel) && strings.HasPrefix(path.Base(st), "python"):
			case !path.IsAbs(st) && localTo(path.Dir(rel), st):
			default:
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
	return fmt.Sprintf("the installed PyPI tree is not what was pinned: %s %s; nothing was started. Run mcpform install to install the pinned tree again (remove the entry first), or mcpform plan to review the pin", escape.String(where), e.What)
}

// Verify checks pin's cache entry before a start, without network: the
// manifest is of pin's requirements and console script, every file of it
// is there, regular, with its size and SHA-256 (a file whose pins.StatKey
// is what it was when it last matched is not hashed again), every link
// points where it did, and no directory gained or lost an entry (a
// directory whose key is unchanged is not read). The first difference is
// a *TreeError naming the file.
func Verify(cacheRoot string, pin *Pin) error {
	_, err := verified(cacheRoot, pin)
	return err
}

// verified is Verify, returning pin with the script the manifest records
// (when pin has none: a plan's fresh resolve).
func verified(cacheRoot string, pin *Pin) (*Pin, error) {
	entry := EntryDir(cacheRoot, pin)
	fail := func(p, what string) error { return &TreeError{Entry: entry, Path: p, What: what} }
	data, err := os.ReadFile(filepath.Join(entry, manifestName))
	if err != nil {
		return nil, fail("", fmt.Sprintf("has no manifest (%v): it was never installed", err))
	}
	var m treeManifest
	if err := strictjson.Check(data); err != nil {
		return nil, fail("", "has a damaged manifest")
	}
	if err := json.Unmarshal(data, &m); err != nil || m.Format != manifestFmt {
		return nil, fail("", "has a manifest of another format")
	}
	if m.Requirements != pin.Requirements {
		return nil, fail("", "is the tree of another requirements file")
	}
	if (pin.Script != "" && m.Script != pin.Script) || (pin.EntryPoint != "" && m.EntryPoint != pin.EntryPoint) {
		return nil, fail("", fmt.Sprintf("starts the console script %s (%s), the lock records %s (%s)", escape.String(m.Script), escape.String(m.EntryPoint), escape.String(pin.Script), escape.String(pin.EntryPoint)))
	}
	sc := statCache{Keys: map[string]string{}}
	if data, err := os.ReadFile(filepath.Join(entry, statName)); err == nil {
		var c statCache
		if json.Unmarshal(data, &c) == nil && c.Format == statFmt && c.Keys != nil {
			sc = c
		}
	}
	venv := filepath.Join(entry, treeDir)
	changed := false
	remember := func(rel string, fi os.FileInfo) {
		if k := pins.StatKey(fi); k != "" && sc.Keys[rel] != k {
			sc.Keys[rel] = k
			changed = true
		}
	}
	var children map[string][]string
	for _, d := range m.Dirs {
		p := filepath.Join(venv, filepath.FromSlash(d))
		fi, err := os.Lstat(p)
		if err != nil || !fi.IsDir() {
			return nil, fail(d, "is missing or no longer a directory")
		}
		if k := pins.StatKey(fi); k != "" && k == sc.Keys[d] {
			continue
		}
		if children == nil {
			children = childrenOf(&m)
		}
		names, err := readNames(p)
		if err != nil {
			return nil, fail(d, fmt.Sprintf("cannot be read: %v", err))
		}
		if want := children[d]; !slices.Equal(names, want) {
			return nil, fail(d, "gained or lost entries: "+diffNames(want, names))
		}
		remember(d, fi)
	}
	for _, f := range m.Files {
		p := filepath.Join(venv, filepath.FromSlash(f.Path))
		fi, err := os.Lstat(p)
		if err != nil {
			return nil, fail(f.Path, "is missing")
		}
		if !fi.Mode().IsRegular() {
			return nil, fail(f.Path, "is no longer a regular file")
		}
		if fi.Size() != f.Size {
			return nil, fail(f.Path, fmt.Sprintf("changed size (%d bytes, installed %d)", fi.Size(), f.Size))
		}
		if k := pins.StatKey(fi); k != "" && k == sc.Keys[f.Path] {
			continue
		}
		sum, _, err := hashPath(p)
		if err != nil {
			return nil, fail(f.Path, fmt.Sprintf("cannot be read: %v", err))
		}
		if sum != f.SHA256 {
			return nil, fail(f.Path, fmt.Sprintf("changed (sha256 %s…, installed %s…)", sum[:12], f.SHA256[:min(12, len(f.SHA256))]))
		}
		if after, err := os.Lstat(p); err == nil && pins.StatKey(after) == pins.StatKey(fi) {
			remember(f.Path, fi)
		}
	}
	for _, l := range m.Links {
		target, err := os.Readlink(filepath.Join(venv, filepath.FromSlash(l.Path)))
		if err != nil {
			return nil, fail(l.Path, "is missing or no longer a link")
		}
		if target != l.Target {
			return nil, fail(l.Path, fmt.Sprintf("points to %s, installed %s", escape.String(target), escape.String(l.Target)))
		}
	}
	if changed {
		sc.Format = statFmt
		_ = writeJSON(filepath.Join(entry, statName), sc) // costs the next start a hash at worst
	}
	out := *pin
	out.Script, out.EntryPoint = m.Script, m.EntryPoint
	return &out, nil
}

func childrenOf(m *treeManifest) map[string][]string {
	c := map[string][]string{}
	add := func(p string) {
		if p != "." {
			c[path.Dir(p)] = append(c[path.Dir(p)], path.Base(p))
		}
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

func diffNames(want, got []string) string {
	var b strings.Builder
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
