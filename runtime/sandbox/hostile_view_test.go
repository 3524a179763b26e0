//go:build linux

package sandbox_test

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/mcpform/mcpform/runtime/sandbox"
)

// viewAttempts are the attacks an outside suite found through the host's
// filesystem metadata, datagram sockets and files the server wrote: each
// works on a server that runs unconfined (TestHostileControl shows it) and
// must fail in the sandbox (TestHostileServer). HT_OUTSIDE holds stand-ins
// for mcp.lock, the audit log and the mcpform binary; HT_SECRET is the
// user's SSH key; HT_DGRAM a host datagram socket that answers "pong".
func viewAttempts() []attempt {
	env := os.Getenv
	outside, secret, tmp := env("HT_OUTSIDE"), env("HT_SECRET"), env("HT_TMP")
	lockFile, auditLog, binary := filepath.Join(outside, "mcp.lock"), filepath.Join(outside, "audit.jsonl"), filepath.Join(outside, "mcpform")
	self, _ := os.Executable()
	return []attempt{
		{"chmod-lock", func() error { return os.Chmod(lockFile, 0o666) }},
		{"chmod-ssh-key", func() error { return os.Chmod(secret, 0o666) }},
		{"chmod-mcpform-binary", func() error { return os.Chmod(binary, 0o777) }},
		{"chmod-own-program", func() error {
			// The same mode again: proof of the right without changing it,
			// since unconfined this is the test binary itself.
			fi, err := os.Stat(self)
			if err != nil {
				return err
			}
			return os.Chmod(self, fi.Mode().Perm())
		}},
		{"chmod-read-path", func() error { return os.Chmod(filepath.Join(env("HT_READ"), "notes.txt"), 0o666) }},
		{"utimes-read-path", func() error {
			t := time.Unix(1e9, 0)
			return os.Chtimes(filepath.Join(env("HT_READ"), "notes.txt"), t, t)
		}},
		{"setxattr-read-path", func() error {
			return unix.Setxattr(filepath.Join(env("HT_READ"), "notes.txt"), "user.mcpform-test", []byte("x"), 0)
		}},
		// The same mode again, for the host's root's own files (the sandbox
		// maps the caller's uid: run as root, the server owns them).
		{"chmod-runtime-base" + rootOnly, func() error { return chmodSame("/bin/true") }},
		{"chmod-dev-null" + rootOnly, func() error { return chmodSame("/dev/null") }},
		// In the sandbox the parent is stage 1, outside the server's Landlock
		// domain, which scopes signals (ABI 6): signal 0 asks only whether
		// one could be sent.
		{"signal-parent", func() error { return unix.Kill(os.Getppid(), 0) }},
		// In the sandbox the parent is stage 1, the mcpform binary.
		{"readlink-parent-exe", func() error { _, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", os.Getppid())); return err }},
		{"write-proc-sys" + rootOnly, func() error {
			// Its own value back: unconfined this is the host's sysctl.
			const p = "/proc/sys/vm/memfd_noexec"
			b, err := os.ReadFile(p)
			if err != nil {
				return fmt.Errorf("(reading failed) %w", err)
			}
			return os.WriteFile(p, b, 0)
		}},
		{"chown-clears-setuid", func() error { return os.Chown(filepath.Join(outside, "suid"), os.Getuid(), os.Getgid()) }},
		{"utimes-audit-log", func() error {
			t := time.Unix(1e9, 0)
			return os.Chtimes(auditLog, t, t)
		}},
		{"setxattr-lock", func() error { return unix.Setxattr(lockFile, "user.mcpform-test", []byte("x"), 0) }},
		{"getxattr-outside", func() error {
			buf := make([]byte, 64)
			_, err := unix.Getxattr(auditLog, "user.planted", buf)
			return err
		}},
		{"removexattr-lock", func() error { return unix.Removexattr(auditLog, "user.planted") }},
		{"stat-lock", func() error { _, err := os.Stat(lockFile); return err }},
		{"stat-ssh-key", func() error { _, err := os.Stat(secret); return err }},
		{"stat-home", func() error { _, err := os.Stat(env("HOME")); return err }},
		{"readlink-outside", func() error { _, err := os.Readlink(filepath.Join(outside, "link")); return err }},
		{"inotify-host-dir", func() error {
			fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
			if err != nil {
				return fmt.Errorf("(inotify_init failed) %w", err)
			}
			defer unix.Close(fd)
			_, err = unix.InotifyAddWatch(fd, outside, unix.IN_CREATE)
			return err
		}},
		{"dgram-socketpair-to-host-socket", func() error { return dgramToHost(env("HT_DGRAM"), tmp) }},
		{"dgram-socketpair-to-abstract-socket", func() error { return dgramToHost("@"+env("HT_ABSTRACT"), tmp) }},
		{"ldso-runs-written-file", func() error {
			p := filepath.Join(tmp, "not-executable")
			if err := copyFile("/bin/true", p, 0o644); err != nil {
				return fmt.Errorf("(writing failed) %w", err)
			}
			out, err := exec.Command(loader(), p).CombinedOutput()
			if err != nil {
				return fmt.Errorf("%w: %s", err, bytes.TrimSpace(out))
			}
			return nil
		}},
		{"exec-written-file-in-dev-shm", func() error {
			p := "/dev/shm/mcpform-sandbox-test-" + fmt.Sprint(os.Getpid())
			defer os.Remove(p)
			if err := copyFile("/bin/true", p, 0o755); err != nil {
				return fmt.Errorf("(writing failed) %w", err)
			}
			return exec.Command(p).Run()
		}},
		{"exec-memfd", func() error { return execMemfd(0) }},
		{"exec-memfd-mfd-exec", func() error { return execMemfd(unix.MFD_EXEC) }},
	}
}

// rootOnly marks an attempt that works unconfined only for the host's root.
const rootOnly = "(root)"

func chmodSame(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	return os.Chmod(p, fi.Mode().Perm())
}

// viewAttemptNames lists viewAttempts' names.
func viewAttemptNames() []string {
	var names []string
	for _, a := range viewAttempts() {
		names = append(names, a.name)
	}
	return names
}

// dgramToHost makes a datagram socketpair, disconnects one end, binds it
// inside dir and sends "ping" to addr, succeeding on the host's "pong".
func dgramToHost(addr, dir string) error {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("(socketpair failed) %w", err)
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	fd := fds[0]
	// connect(AF_UNSPEC) dissolves the pair, so that the end accepts
	// datagrams from anyone.
	var unspec [16]byte
	if _, _, e := unix.Syscall(unix.SYS_CONNECT, uintptr(fd), uintptr(unsafe.Pointer(&unspec[0])), uintptr(len(unspec))); e != 0 {
		return fmt.Errorf("(connect AF_UNSPEC failed) %w", e)
	}
	local := filepath.Join(dir, fmt.Sprintf("dg-%d", time.Now().UnixNano()))
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: local}); err != nil {
		return fmt.Errorf("(bind failed) %w", err)
	}
	defer os.Remove(local)
	if err := unix.Sendto(fd, []byte("ping"), 0, &unix.SockaddrUnix{Name: addr}); err != nil {
		return err
	}
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Sec: 2})
	buf := make([]byte, 16)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil {
		return err
	}
	if string(buf[:n]) != "pong" {
		return fmt.Errorf("answer %q", buf[:n])
	}
	return nil
}

// execMemfd writes /bin/true into a memfd and executes it by its
// /proc/self/fd path.
func execMemfd(flags int) error {
	fd, err := unix.MemfdCreate("payload", flags)
	if err != nil {
		return fmt.Errorf("(memfd_create failed) %w", err)
	}
	defer unix.Close(fd)
	b, err := os.ReadFile("/bin/true")
	if err != nil {
		return fmt.Errorf("(reading /bin/true failed) %w", err)
	}
	if _, err := unix.Write(fd, b); err != nil {
		return fmt.Errorf("(writing the memfd failed) %w", err)
	}
	return exec.Command(fmt.Sprintf("/proc/self/fd/%d", fd)).Run()
}

func copyFile(from, to string, mode os.FileMode) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, mode)
}

// loader is the dynamic loader of this machine's /bin/true.
func loader() string {
	for _, p := range []string{"/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "/lib64/ld-linux-x86-64.so.2"
}

// viewFixture is what the view attempts find outside the grants: the
// stand-ins in outside, a host datagram socket (pathname and abstract)
// that answers "pong", and the environment that names them.
func viewFixture(t *testing.T, outside string) []string {
	t.Helper()
	for _, f := range []string{"mcp.lock", "audit.jsonl"} {
		must(t, os.WriteFile(filepath.Join(outside, f), []byte("{}\n"), 0o644))
	}
	must(t, copyFile("/bin/true", filepath.Join(outside, "mcpform"), 0o755))
	must(t, os.WriteFile(filepath.Join(outside, "suid"), []byte("x"), 0o644))
	must(t, os.Chmod(filepath.Join(outside, "suid"), 0o4755))
	must(t, os.Symlink("/etc/hostname", filepath.Join(outside, "link")))
	if err := unix.Setxattr(filepath.Join(outside, "audit.jsonl"), "user.planted", []byte("v"), 0); err != nil {
		t.Fatalf("this file system has no user xattrs (%v): the xattr attempts cannot be shown", err)
	}
	sock := filepath.Join(outside, "log.sock")
	abstract := fmt.Sprintf("mcpform-sandbox-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	for _, name := range []string{sock, "@" + abstract} {
		c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
		must(t, err)
		t.Cleanup(func() { c.Close() })
		go func() {
			buf := make([]byte, 16)
			for {
				n, from, err := c.ReadFromUnix(buf)
				if err != nil {
					return
				}
				if bytes.Equal(buf[:n], []byte("ping")) && from != nil {
					c.WriteToUnix([]byte("pong"), from)
				}
			}
		}()
	}
	return []string{"HT_DGRAM=" + sock, "HT_ABSTRACT=" + abstract}
}

// TestHostileControl runs the view attempts of the hostile server without
// the sandbox, against the same fixture: each must work there, or
// TestHostileServer's refusals would prove nothing.
func TestHostileControl(t *testing.T) {
	home, outside, tmp, read := tempDir(t), tempDir(t), tempDir(t), tempDir(t)
	must(t, os.WriteFile(filepath.Join(read, "notes.txt"), []byte("notes"), 0o644))
	secret := filepath.Join(home, ".ssh", "id_rsa")
	must(t, os.MkdirAll(filepath.Dir(secret), 0o700))
	must(t, os.WriteFile(secret, []byte("key"), 0o600))
	env := append([]string{"HOME=" + home, "HT_SECRET=" + secret, "HT_OUTSIDE=" + outside, "HT_TMP=" + tmp, "HT_READ=" + read}, viewFixture(t, outside)...)
	cmd := selfCommand(t, "view", env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	results := parseResults(out)
	for _, name := range viewAttemptNames() {
		if strings.HasSuffix(name, rootOnly) && os.Getuid() != 0 {
			t.Logf("control: %s needs the host's root to work unconfined; running as uid %d", name, os.Getuid())
			continue
		}
		if v, ok := results[name]; !ok || v != "ok" {
			t.Errorf("control: %s does not work without the sandbox (%q), so its refusal in the sandbox shows nothing", name, v)
		}
	}
	if fi, err := os.Stat(filepath.Join(outside, "suid")); err != nil || fi.Mode()&os.ModeSetuid != 0 {
		t.Errorf("control: chown did not clear the setuid bit (%v, %v)", fi.Mode(), err)
	}
}

// parseResults reads the "RESULT name verdict" lines of a hostile server.
func parseResults(out []byte) map[string]string {
	results := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "RESULT "); ok {
			name, verdict, _ := strings.Cut(rest, " ")
			results[name] = verdict
		}
	}
	return results
}

// viewServer is the test binary's mode "view": the view attempts alone.
func viewServer() int {
	for _, a := range viewAttempts() {
		if err := a.try(); err != nil {
			fmt.Printf("RESULT %s failed: %v\n", a.name, err)
		} else {
			fmt.Printf("RESULT %s ok\n", a.name)
		}
	}
	return 0
}

// TestViewHidesOutside checks from inside the sandbox that the host's tree
// outside the grants is not there at all: of the names in the host's /,
// only those of the runtime base and of the grants exist.
func TestViewHidesOutside(t *testing.T) {
	requireSandbox(t)
	ents, err := os.ReadDir("/")
	must(t, err)
	probe := []string{"/root/.ssh", "/var", "/sys", "/etc/shadow", "/etc/hostname", "/boot"}
	for _, e := range ents {
		probe = append(probe, "/"+e.Name())
	}
	cmd := selfCommand(t, "lstat", "HT_PATHS="+strings.Join(probe, ":"))
	must(t, sandbox.Command(cmd, sandbox.Spec{Tmp: tempDir(t)}))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// The runtime base, and the top directories of the server's program (this
	// test binary), its working directory and ${TMP}, which the view
	// recreates.
	allowed := map[string]bool{}
	for _, p := range []string{"/bin", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/sbin", "/usr"} {
		allowed[p] = true
	}
	exe, _ := os.Executable()
	wd, _ := os.Getwd()
	for _, p := range []string{exe, wd, tempDir(t)} {
		allowed["/"+strings.Split(p, "/")[1]] = true
	}
	var present []string
	for _, line := range strings.Split(string(out), "\n") {
		p, ok := strings.CutPrefix(line, "PRESENT ")
		if !ok {
			continue
		}
		present = append(present, p)
		if !allowed[p] {
			t.Errorf("%s is visible in the sandbox, and nothing granted it", p)
		}
	}
	if len(present) < 3 {
		t.Fatalf("only %v visible: the probe did not run\n%s", present, out)
	}
	sort.Strings(present)
	t.Logf("visible in the sandbox: %v", present)
}

// TestReadRootKeepsProcPrivate grants the whole host tree for reading:
// still, /proc is the sandbox's own (no host process in it), and nothing is
// writable or executable beyond the runtime base.
func TestReadRootKeepsProcPrivate(t *testing.T) {
	requireSandbox(t)
	host := "/proc/" + fmt.Sprint(os.Getpid())
	cmd := selfCommand(t, "lstat", "HT_PATHS="+host+":/etc/hostname")
	must(t, sandbox.Command(cmd, sandbox.Spec{Read: []string{"/"}, Tmp: tempDir(t)}))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if strings.Contains(string(out), "PRESENT "+host) {
		t.Errorf("the host's process %s is visible in the sandbox's /proc", host)
	}
	if !strings.Contains(string(out), "PRESENT /etc/hostname") {
		t.Errorf("read = [\"/\"] does not show the host's tree:\n%s", out)
	}
}

// lstatPaths is the mode "lstat": it prints which of HT_PATHS exist.
func lstatPaths() int {
	for _, p := range strings.Split(os.Getenv("HT_PATHS"), ":") {
		if _, err := os.Lstat(p); err == nil {
			fmt.Println("PRESENT " + p)
		}
	}
	return 0
}
