//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/mcpform/mcpform/internal/mutation"
)

// The server's filesystem view. Landlock mediates opening, creating,
// renaming, linking and executing files, not their metadata: under
// Landlock alone a server can still stat, readlink and watch (inotify) any
// path, and chmod, chown, set the times and the xattrs of any file its uid
// owns. So the paths outside the grants do not exist for the server: stage 1
// builds a root of its own, a tmpfs holding only the grants, each bind
// mounted at its own path, and pivots into it. Landlock stays as the second
// layer.
//
// Every mount is nosuid. Read and execute grants (the runtime base, the
// program) are read-only; read grants are read-only and noexec; write grants
// and ${TMP} are writable, nodev and noexec, so that nothing the server
// writes can be executed or mapped executable (mmap PROT_EXEC of a file on a
// noexec mount fails, which closes "ld.so FILE" too). The device files are
// read-only mounts of the host's nodes (writing to a device node does not
// need a writable mount; changing its mode does). The tmpfs root itself is
// read-only once built.

// viewAttrs are the mount attributes of each kind of grant.
var viewAttrs = map[access]uint64{
	accessExec:  unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV,
	accessRead:  unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC,
	accessWrite: unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC,
	accessDev:   unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NOEXEC,
}

// viewSource is one grant, cloned from the host's view before the new root
// covers anything.
type viewSource struct {
	// tree is, once openSources returns, a detached clone of its mount tree
	// (open_tree) with the access's attributes, or -1 when a grant above it
	// already shows it alike.
	tree   int
	real   string // the path it resolved to, where it is mounted
	alias  string // the path as granted, when it differs from real
	access access
	dir    bool
	fresh  bool // tree is a new tmpfs, not a clone of the host's
}

// tmpSource makes the tmpfs that stands for tmp.Path in the view, a
// detached mount (fsopen, fsmount) with the host directory's
// subdirectories.
func tmpSource(tmp privateTmp) (viewSource, error) {
	real, err := filepath.EvalSymlinks(tmp.Path)
	if err != nil {
		return viewSource{}, err
	}
	var dirs []string
	err = filepath.WalkDir(real, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && p != real {
			dirs = append(dirs, p[len(real)+1:])
		}
		return err
	})
	if err != nil {
		return viewSource{}, err
	}
	fs, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return viewSource{}, fmt.Errorf("creating a tmpfs (fsopen needs Linux 5.2): %w", err)
	}
	defer unix.Close(fs)
	for k, v := range map[string]string{"size": strconv.FormatInt(tmp.Size, 10), "mode": "0700"} {
		if err := unix.FsconfigSetString(fs, k, v); err != nil {
			return viewSource{}, fmt.Errorf("configuring the tmpfs (%s): %w", k, err)
		}
	}
	if err := unix.FsconfigCreate(fs); err != nil {
		return viewSource{}, fmt.Errorf("creating the tmpfs: %w", err)
	}
	tree, err := unix.Fsmount(fs, unix.FSMOUNT_CLOEXEC, int(viewAttrs[accessWrite]))
	if err != nil {
		return viewSource{}, fmt.Errorf("mounting the tmpfs: %w", err)
	}
	for _, d := range dirs { // parents first: WalkDir's order
		if err := unix.Mkdirat(tree, d, 0o700); err != nil {
			unix.Close(tree)
			return viewSource{}, fmt.Errorf("creating %s in the tmpfs: %w", d, err)
		}
	}
	return viewSource{tree: tree, real: real, access: accessWrite, dir: true, fresh: true}, nil
}

// stagingDirs are candidates for where stage 1 mounts the new root's tmpfs
// in its own mount namespace. What is under it on the host stays reachable:
// every grant is opened before the tmpfs covers anything.
var stagingDirs = []string{"/tmp", "/mnt", "/run", "/var/tmp"}

// enterView replaces this mount namespace's root with the server's view:
// the rules' paths (grants through a writable directory left out, as for
// Landlock), a fresh /proc, a /dev of the allowed device nodes, and wd (the server's working directory: granted, or an
// empty directory). It is called in stage 1, in the new mount namespace,
// after /proc of the new pid namespace is mountable.
func enterView(rules []pathRule, wd string, tmp privateTmp) error {
	if mutation.Off("mountns") {
		return unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
	}
	srcs, err := openSources(rules, tmp)
	defer func() {
		for _, s := range srcs {
			if s.tree >= 0 {
				unix.Close(s.tree)
			}
		}
	}()
	if err != nil {
		return err
	}
	root := ""
	for _, d := range stagingDirs {
		if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
			root = d
			break
		}
	}
	if root == "" {
		return fmt.Errorf("no directory to build the server's root in (tried %v)", stagingDirs)
	}
	if err := unix.Mount("tmpfs", root, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
		return fmt.Errorf("mounting the server's root tmpfs: %w", err)
	}

	for _, s := range srcs {
		if s.tree < 0 {
			continue // in the view already, through a grant above it
		}
		if err := bindAt(root, s); err != nil {
			return err
		}
	}
	for _, s := range srcs {
		if s.alias == "" {
			continue
		}
		// The path as granted (through a symlink on the host) leads to where
		// the grant is mounted.
		at := root + s.alias
		if _, err := os.Lstat(at); err == nil {
			continue
		}
		if os.MkdirAll(filepath.Dir(at), 0o755) == nil {
			os.Symlink(s.real, at)
		}
	}
	if err := devAndProc(root); err != nil {
		return err
	}
	if _, err := os.Stat(root + wd); err != nil {
		os.MkdirAll(root+wd, 0o755) // an empty directory: the server starts where it was told, and finds nothing there
	}

	if err := unix.Chdir(root); err != nil {
		return err
	}
	// pivot_root(".", ".") stacks the old root on the new one; detaching it
	// leaves the new root alone.
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root into the server's root: %w", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detaching the host's root: %w", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return err
	}
	if err := unix.MountSetattr(-1, "/", 0, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC}); err != nil {
		return fmt.Errorf("making the server's root read-only: %w", err)
	}
	if err := unix.Chdir(wd); err != nil {
		return unix.Chdir("/")
	}
	return nil
}

// privateTmp is the server's ${TMP}: the host directory made for it, shown
// in the view as a tmpfs of its own of at most Size bytes (charged to the
// server's memory cgroup where there is one), holding the same
// directories, so that what the server writes there cannot fill the host's
// disk.
type privateTmp struct {
	Path string
	Size int64
}

// openSources opens every grant of rules in the host's view, sorted by
// where it is mounted (parents first). /proc is not a grant of the host's:
// the view gets a fresh one; nor is tmp.Path, which becomes a tmpfs. A
// missing optional path is left out, as Landlock leaves it out.
func openSources(rules []pathRule, tmp privateTmp) ([]viewSource, error) {
	var srcs []viewSource
	for _, r := range grantable(rules) {
		if r.Path == "/proc" {
			continue
		}
		if tmp.Path != "" && r.Path == tmp.Path {
			s, err := tmpSource(tmp)
			if err != nil {
				return srcs, fmt.Errorf("the server's ${TMP}: %w", err)
			}
			srcs = append(srcs, s)
			continue
		}
		fd, err := unix.Open(r.Path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			if errors.Is(err, unix.ENOENT) && optionalRule(r) {
				continue
			}
			return srcs, fmt.Errorf("sandbox path %q: %w", r.Path, err)
		}
		real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
		if err != nil {
			unix.Close(fd)
			return srcs, fmt.Errorf("sandbox path %q: %w", r.Path, err)
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return srcs, fmt.Errorf("sandbox path %q: %w", r.Path, err)
		}
		if r.Access == accessDev && st.Mode&unix.S_IFMT != unix.S_IFCHR {
			unix.Close(fd)
			return srcs, fmt.Errorf("sandbox device %q is not a character device", r.Path)
		}
		s := viewSource{tree: fd, real: real, access: r.Access, dir: st.Mode&unix.S_IFMT == unix.S_IFDIR}
		if real != filepath.Clean(r.Path) {
			s.alias = filepath.Clean(r.Path)
		}
		srcs = append(srcs, s)
	}
	sort.SliceStable(srcs, func(i, j int) bool { return srcs[i].real < srcs[j].real })
	// Each tree is cloned now, before the staging tmpfs exists: a clone
	// made later of a grant above it ("/") would hold the staging tmpfs too.
	// A grant already in the view alike is not cloned at all.
	var kept []viewSource
	for i := range srcs {
		if srcs[i].fresh {
			kept = append(kept, srcs[i])
			continue
		}
		fd := srcs[i].tree
		srcs[i].tree = -1
		if coveredAlike(kept, srcs[i]) {
			unix.Close(fd)
			continue
		}
		tree, err := cloneTree(fd, srcs[i].access)
		unix.Close(fd)
		if err != nil {
			return srcs, fmt.Errorf("sandbox path %q: %w", srcs[i].real, err)
		}
		srcs[i].tree = tree
		kept = append(kept, srcs[i])
	}
	return srcs, nil
}

// coveredAlike reports whether s is already in the view, with the same
// access, through a mount of a directory above it: the view maps every
// host path to itself, so the same object is there already.
func coveredAlike(mounted []viewSource, s viewSource) bool {
	for _, m := range mounted {
		if m.dir && m.access == s.access && covers(m.real, s.real) {
			return true
		}
	}
	return false
}

// cloneTree clones the mount tree at fd, submounts included, and sets the
// attributes of access on every mount of the clone.
func cloneTree(fd int, a access) (int, error) {
	tree, err := unix.OpenTree(fd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH|unix.AT_RECURSIVE)
	if err != nil {
		return -1, fmt.Errorf("cloning its mount (open_tree needs Linux 5.2): %w", err)
	}
	attr := &unix.MountAttr{Attr_set: viewAttrs[a]}
	if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, attr); err != nil {
		unix.Close(tree)
		return -1, fmt.Errorf("restricting its mount (mount_setattr needs Linux 5.12): %w", err)
	}
	return tree, nil
}

// bindAt mounts the clone of s at root+s.real.
func bindAt(root string, s viewSource) error {
	at := root + s.real
	if err := os.MkdirAll(filepath.Dir(at), 0o755); err != nil {
		return fmt.Errorf("preparing %q in the server's root: %w", s.real, err)
	}
	if s.dir {
		if err := os.Mkdir(at, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("preparing %q in the server's root: %w", s.real, err)
		}
	} else if _, err := os.Lstat(at); errors.Is(err, os.ErrNotExist) {
		if err := os.WriteFile(at, nil, 0o644); err != nil {
			return fmt.Errorf("preparing %q in the server's root: %w", s.real, err)
		}
	}
	if err := unix.MoveMount(s.tree, "", unix.AT_FDCWD, at, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("mounting %q in the server's root: %w", s.real, err)
	}
	return nil
}

// devAndProc gives the view a fresh, read-only /proc of the sandbox's pid
// namespace,
// and /dev/fd, /dev/stdin, /dev/stdout and /dev/stderr (the device nodes
// themselves are grants; there is no /dev/shm).
func devAndProc(root string) error {
	if err := os.MkdirAll(root+"/proc", 0o755); err != nil {
		return err
	}
	// Read-only: Landlock grants /proc no write either, and a server that is
	// uid 0 of its user namespace would otherwise pass the permission check
	// of /proc/sys files when mcpform runs as the host's root.
	if err := unix.Mount("proc", root+"/proc", "proc", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mounting a fresh /proc (a container that masks parts of /proc forbids this): %w", err)
	}
	if err := os.MkdirAll(root+"/dev", 0o755); err != nil {
		return err
	}
	for name, target := range map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		if err := os.Symlink(target, root+"/dev/"+name); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
	}
	return nil
}

// grantable drops the rules whose path resolves through a directory the
// server can write: such a grant is either redundant (inside a write path
// anyway) or goes through a symlink the server could have planted on an
// earlier run (W/docs -> ~/.ssh). Stage 1 applies it to the mounts and
// stage 2 to the Landlock rules.
func grantable(rules []pathRule) []pathRule {
	var writable []string
	for _, r := range rules {
		if r.Access == accessWrite {
			if real, err := filepath.EvalSymlinks(r.Path); err == nil {
				writable = append(writable, real)
			}
		}
	}
	var out []pathRule
	for _, r := range rules {
		if !throughWritable(r.Path, writable) {
			out = append(out, r)
		}
	}
	return out
}

// optionalRule reports whether a rule's path may be missing on this
// machine: the runtime base's directories, /etc files and devices.
func optionalRule(r pathRule) bool {
	return r.Access == accessExec || r.Access == accessDev || r.Path == "/proc" || strings.HasPrefix(r.Path, "/etc/")
}
