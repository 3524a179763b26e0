package sandbox

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// systemDirs are read and executed by every dynamically linked program and
// interpreter: the loader, libc, the interpreters themselves, their standard
// libraries, CA bundles under /usr/share, zoneinfo. Nothing here is the
// user's.
var systemDirs = []string{"/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin"}

// etcFiles are the files under /etc that the C library, TLS stacks and
// interpreters read to start, resolve names and verify certificates. /etc
// as a whole is not granted: it holds /etc/shadow, /etc/ssh host keys,
// credentials of system services.
var etcFiles = []string{
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/ld.so.preload",
	"/etc/localtime", "/etc/timezone",
	"/etc/passwd", "/etc/group", "/etc/nsswitch.conf",
	"/etc/hosts", "/etc/host.conf", "/etc/resolv.conf", "/etc/gai.conf",
	"/etc/services", "/etc/protocols", "/etc/mime.types",
	"/etc/ssl", "/etc/pki", "/etc/ca-certificates", "/etc/ca-certificates.conf",
	"/etc/crypto-policies", "/etc/alternatives", "/etc/os-release",
}

// devFiles are the device files a program may open: the bit bucket and the
// random sources. No terminal, no block or character device beyond these.
var devFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// runtimeBase returns the Landlock rules every sandboxed server gets,
// whatever its policy:
//
//   - systemDirs, read and execute;
//   - etcFiles, read;
//   - devFiles, read and write (no ioctl);
//   - /proc, read: the sandbox's own procfs, showing only its pid namespace;
//   - the program (see programRoots), read and execute.
//
// argv is the server's command line with argv[0] resolved to path; env its
// environment (for a "#!/usr/bin/env node" interpreter lookup); protect the
// paths a program root may never cover; writable the resolved write paths.
func runtimeBase(path string, argv, env, protect, writable []string) []pathRule {
	var rules []pathRule
	for _, d := range systemDirs {
		rules = append(rules, pathRule{d, accessExec})
	}
	for _, f := range etcFiles {
		rules = append(rules, pathRule{f, accessRead})
	}
	for _, f := range devFiles {
		rules = append(rules, pathRule{f, accessDev})
	}
	rules = append(rules, pathRule{"/proc", accessRead})
	for _, r := range programRoots(path, argv, env, protect, writable) {
		rules = append(rules, pathRule{r, accessExec})
	}
	return rules
}

// programRoots returns what the server's program needs beyond the system
// directories. The rule, applied to the executable, to the interpreter of a
// "#!" script (looked up in PATH for "#!/usr/bin/env NAME") and to the first
// argument that names an existing file (node server.js, python server.py):
//
//   - a file under a node_modules directory brings the outermost
//     node_modules directory above it: npm and npx hoist a package's
//     dependencies there, so the package cannot start without it;
//   - a file in the bin directory of a Python virtual environment (a
//     directory holding pyvenv.cfg) brings the environment's root;
//   - anything else brings only the file itself, resolved through symlinks.
//
// A directory root that would cover a protected path (such as $HOME, for a
// virtual environment created in the home directory itself) shrinks to the
// file. The file itself is granted even when protected (the mcpform binary
// may be the server): read and execute, never write.
// Everything else a server needs (its project directory, caches) must be
// listed in filesystem.read. A program file whose path resolves through a
// write path is not granted at all: the server could have replaced it with
// a symlink to anything (and nothing writable is executable anyway).
func programRoots(path string, argv, env, protect, writable []string) []string {
	var files []string
	files = append(files, path)
	if interp := shebang(path, env); interp != "" {
		files = append(files, interp)
	}
	for _, a := range argv[1:] {
		if strings.HasPrefix(a, "-") || !filepath.IsAbs(a) && !strings.Contains(a, "/") {
			continue
		}
		if fi, err := os.Stat(a); err == nil && fi.Mode().IsRegular() {
			abs, err := filepath.Abs(a)
			if err == nil {
				files = append(files, abs)
			}
			break
		}
	}
	var roots []string
	add := func(r string, checked bool) {
		for _, p := range protect {
			if !checked {
				break // the program file itself: read and execute only
			}
			if covers(r, p) || covers(r, resolveExisting(p)) {
				return
			}
		}
		for _, have := range roots {
			if have == r {
				return
			}
		}
		roots = append(roots, r)
	}
	for _, f := range files {
		if throughWritable(f, writable) {
			continue
		}
		for _, cand := range []string{f, resolveExisting(f)} {
			if nm := outermostNodeModules(cand); nm != "" {
				add(resolveExisting(nm), true)
			}
			if venv := venvRoot(cand); venv != "" {
				add(resolveExisting(venv), true)
			}
		}
		add(resolveExisting(f), false)
	}
	return roots
}

// outermostNodeModules returns the outermost ancestor of p named
// node_modules, or "".
func outermostNodeModules(p string) string {
	parts := strings.Split(filepath.Clean(p), "/")
	for i, el := range parts[:len(parts)-1] {
		if el == "node_modules" {
			return strings.Join(parts[:i+1], "/")
		}
	}
	return ""
}

// venvRoot returns VENV when p is VENV/bin/NAME and VENV/pyvenv.cfg exists.
func venvRoot(p string) string {
	bin := filepath.Dir(p)
	if filepath.Base(bin) != "bin" {
		return ""
	}
	root := filepath.Dir(bin)
	if _, err := os.Stat(filepath.Join(root, "pyvenv.cfg")); err != nil {
		return ""
	}
	return root
}

// shebang returns the interpreter of a "#!" script, with "/usr/bin/env
// NAME" resolved through env's PATH, or "".
func shebang(path string, env []string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 256).ReadString('\n')
	if !strings.HasPrefix(line, "#!") || err != nil && len(line) < 3 {
		return ""
	}
	fields := strings.Fields(line[2:])
	if len(fields) == 0 {
		return ""
	}
	interp := fields[0]
	if filepath.Base(interp) == "env" {
		for _, a := range fields[1:] {
			if strings.HasPrefix(a, "-") {
				continue
			}
			return lookPath(a, env)
		}
		return ""
	}
	return interp
}

// lookPath finds name in env's PATH.
func lookPath(name string, env []string) string {
	if strings.Contains(name, "/") {
		return name
	}
	pathVar := ""
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "PATH="); ok {
			pathVar = v
		}
	}
	for _, dir := range filepath.SplitList(pathVar) {
		if !filepath.IsAbs(dir) {
			continue // a relative PATH entry would depend on the working directory
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// lookupDirs returns every directory in which a name is looked up while
// resolving p, following symlinks the way the kernel does (a relative
// target continues from the symlink's directory, ".." from the directory
// reached so far). The sandbox uses it to skip a grant whose resolution
// passes through a directory the server can write: a symlink the server
// planted there during an earlier run must not widen what it gets now.
func lookupDirs(p string) ([]string, error) {
	var dirs []string
	cur := "/"
	rest := strings.Split(p, "/") // not Cleaned: ".." after a symlink is the kernel's to resolve
	for hops := 0; len(rest) > 0; {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		dirs = append(dirs, cur)
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if err != nil {
			return dirs, err
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		if hops++; hops > 40 {
			return dirs, fmt.Errorf("resolving %q: too many levels of symbolic links", p)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return dirs, err
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	return dirs, nil
}

// throughWritable reports whether resolving p looks a name up inside one of
// the (resolved) writable directories.
func throughWritable(p string, writable []string) bool {
	dirs, _ := lookupDirs(p)
	for _, d := range dirs {
		for _, w := range writable {
			if covers(w, d) {
				return true
			}
		}
	}
	return false
}
