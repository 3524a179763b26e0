//go:build linux

package sandbox_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/mcpform/mcpform/runtime/egress"
	"github.com/mcpform/mcpform/runtime/sandbox"
	"golang.org/x/sys/unix"
)

// hostSecret is planted in the test process's environment; the hostile
// server must not find it in any /proc/PID/environ it can read.
const hostSecret = "MCPFORM_TEST_HOST_SECRET=swordfish-0b5e"

// attempt is one thing the hostile server tries. It returns nil when it
// got what it wanted (the escape worked, or the allowed action worked).
type attempt struct {
	name string
	try  func() error
}

// hostile is the hostile server: it tries each attack and each allowed
// action and prints one line per attempt: "RESULT name ok" or
// "RESULT name failed: error".
func hostile() int {
	env := os.Getenv
	secret, readDir, writeDir, outside := env("HT_SECRET"), env("HT_READ"), env("HT_WRITE"), env("HT_OUTSIDE")
	port, qport, hostPID, hostIP := env("HT_PORT"), env("HT_QPORT"), env("HT_HOSTPID"), env("HT_HOSTIP")
	proxy := strings.TrimPrefix(env("HTTPS_PROXY"), "http://")
	attempts := []attempt{
		// Allowed.
		{"allowed/read-read-path", func() error { return expectContent(filepath.Join(readDir, "notes.txt"), "notes") }},
		{"allowed/write-write-path", func() error { return writeAndCheck(filepath.Join(writeDir, "out.txt")) }},
		{"allowed/write-tmp", func() error {
			if os.Getenv("TMPDIR") != env("HT_TMP") {
				return fmt.Errorf("TMPDIR is %q", os.Getenv("TMPDIR"))
			}
			return writeAndCheck(filepath.Join(os.Getenv("TMPDIR"), "t.txt"))
		}},
		{"allowed/write-dev-null", func() error { return os.WriteFile("/dev/null", []byte("x"), 0) }},
		{"allowed/read-dev-urandom", func() error {
			f, err := os.Open("/dev/urandom")
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.Read(make([]byte, 8))
			return err
		}},
		{"allowed/proxy-listed-ip", func() error { return connectGet(proxy, "127.0.0.1:"+port) }},
		{"allowed/proxy-listed-name", func() error { return connectGet(proxy, "listed.example.com:"+port) }},
		{"allowed/proxy-plain-http", func() error { return plainGet(proxy, "http://127.0.0.1:"+port+"/") }},

		// Filesystem.
		{"read-ssh-key", func() error { _, err := os.ReadFile(secret); return err }},
		{"read-etc-shadow", func() error { _, err := os.ReadFile("/etc/shadow"); return err }},
		{"list-home", func() error { _, err := os.ReadDir(env("HOME")); return err }},
		{"write-outside", func() error { return os.WriteFile(filepath.Join(outside, "x"), []byte("x"), 0o644) }},
		{"write-home", func() error { return os.WriteFile(filepath.Join(env("HOME"), "x"), []byte("x"), 0o644) }},
		{"write-slash-tmp", func() error { return os.WriteFile("/tmp/mcpform-sandbox-escape", []byte("x"), 0o644) }},
		{"write-read-path", func() error { return os.WriteFile(filepath.Join(readDir, "notes.txt"), []byte("x"), 0o644) }},
		{"truncate-read-path", func() error { return os.Truncate(filepath.Join(readDir, "notes.txt"), 0) }},
		{"follow-planted-symlink", func() error { _, err := os.ReadFile(filepath.Join(writeDir, "escape")); return err }},
		{"write-through-own-symlink", func() error {
			link := filepath.Join(writeDir, "link2")
			if err := os.Symlink(filepath.Join(outside, "planted"), link); err != nil {
				return fmt.Errorf("(creating the symlink itself failed) %w", err)
			}
			return os.WriteFile(link, []byte("x"), 0o644)
		}},
		{"hardlink-secret-into-write-path", func() error { return os.Link(secret, filepath.Join(writeDir, "hl")) }},
		{"rename-out-of-write-path", func() error {
			f := filepath.Join(writeDir, "mv.txt")
			os.WriteFile(f, []byte("x"), 0o644)
			return os.Rename(f, filepath.Join(outside, "mv.txt"))
		}},
		{"exec-from-write-path", func() error {
			b, err := os.ReadFile("/bin/true")
			if err != nil {
				return fmt.Errorf("(reading /bin/true failed) %w", err)
			}
			p := filepath.Join(writeDir, "true")
			if err := os.WriteFile(p, b, 0o755); err != nil {
				return fmt.Errorf("(writing failed) %w", err)
			}
			return exec.Command(p).Run()
		}},
		{"mount-tmpfs", func() error { return unix.Mount("tmpfs", writeDir, "tmpfs", 0, "") }},
		{"chroot", func() error { return unix.Chroot(writeDir) }},

		// Network, directly.
		{"tcp-direct-loopback-host-port", func() error { return dial("tcp", "127.0.0.1:"+port) }},
		{"tcp-direct-host-ip", func() error {
			if hostIP == "" {
				return errors.New("(no non-loopback host address to try)")
			}
			return dial("tcp", net.JoinHostPort(hostIP, port))
		}},
		{"tcp-direct-internet", func() error { return dial("tcp", "1.1.1.1:443") }},
		{"udp-socket", func() error { return socket(unix.AF_INET, unix.SOCK_DGRAM, 0) }},
		{"udp-dns", func() error { return dial("udp", "8.8.8.8:53") }},
		{"udp6-socket", func() error { return socket(unix.AF_INET6, unix.SOCK_DGRAM, 0) }},
		{"mptcp-socket", func() error { return socket(unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP) }},
		{"raw-socket", func() error { return socket(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP) }},
		{"icmp-ping-socket", func() error { return socket(unix.AF_INET, unix.SOCK_DGRAM, unix.IPPROTO_ICMP) }},
		{"packet-socket", func() error { return socket(unix.AF_PACKET, unix.SOCK_RAW, 0) }},
		{"netlink-audit-socket", func() error { return socket(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_AUDIT) }},
		{"unix-socket-host-agent", func() error { return dial("unix", env("HT_AGENT")) }},
		{"unix-socket-egress-bypass", func() error { return dial("unix", env("HT_EGRESS")) }},
		{"io-uring", func() error {
			var params [120]byte
			_, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 4, uintptr(unsafe.Pointer(&params[0])), 0)
			return errnoErr(e)
		}},

		// Network, through the proxy.
		{"proxy-unlisted-host", func() error { return connectGet(proxy, "unlisted.example.org:443") }},
		{"proxy-localhost", func() error { return connectGet(proxy, "localhost:"+port) }},
		{"proxy-name-resolving-to-loopback", func() error { return connectGet(proxy, "public.example.com:"+qport) }},
		{"proxy-loopback-unlisted-port", func() error { return connectGet(proxy, "127.0.0.1:"+qport) }},
		{"proxy-plain-http-unlisted", func() error { return plainGet(proxy, "http://localhost:"+port+"/") }},

		// Namespaces and other processes.
		{"unshare-user", func() error { return unix.Unshare(unix.CLONE_NEWUSER) }},
		{"unshare-net", func() error { return unix.Unshare(unix.CLONE_NEWNET) }},
		{"clone-newuser", func() error {
			cmd := exec.Command("/bin/true")
			cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER}
			return cmd.Run()
		}},
		{"clone3", func() error {
			_, _, e := unix.Syscall(unix.SYS_CLONE3, 0, 0, 0)
			if e == unix.ENOSYS {
				return e
			}
			return fmt.Errorf("clone3 returned %v, want ENOSYS", e)
		}},
		{"open-host-init-netns", func() error { return openClose("/proc/" + hostPID + "/ns/net") }},
		{"open-pid1-netns", func() error { return openClose("/proc/1/ns/net") }},
		{"setns-own-netns", func() error {
			fd, err := unix.Open("/proc/self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				return fmt.Errorf("(opening own ns failed) %w", err)
			}
			defer unix.Close(fd)
			return unix.Setns(fd, unix.CLONE_NEWNET)
		}},
		{"ptrace-parent", func() error { return ptraceAttach(os.Getppid()) }},
		{"ptrace-pid1", func() error { return ptraceAttach(1) }},
		{"read-parent-environ", func() error { _, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", os.Getppid())); return err }},
		{"read-host-environ", func() error { _, err := os.ReadFile("/proc/" + hostPID + "/environ"); return err }},
		{"find-host-secret-in-proc", func() error {
			ents, _ := os.ReadDir("/proc")
			for _, e := range ents {
				if b, err := os.ReadFile("/proc/" + e.Name() + "/environ"); err == nil && strings.Contains(string(b), hostSecret) {
					return nil
				}
			}
			return errors.New("not found")
		}},
		{"see-host-processes", func() error {
			ents, _ := os.ReadDir("/proc")
			var pids []string
			for _, e := range ents {
				if _, err := strconv.Atoi(e.Name()); err == nil && e.Name() != strconv.Itoa(os.Getpid()) && e.Name() != "1" {
					pids = append(pids, e.Name())
				}
			}
			if len(pids) > 0 {
				return nil
			}
			return errors.New("only pid 1 and self visible")
		}},
		{"see-host-interfaces", func() error {
			ifs, err := net.Interfaces()
			if err != nil {
				return err
			}
			for _, i := range ifs {
				if i.Name != "lo" {
					return nil
				}
			}
			return fmt.Errorf("only lo among %d interfaces", len(ifs))
		}},
		{"tiocsti", func() error {
			c := byte('x')
			_, _, e := unix.Syscall(unix.SYS_IOCTL, 2, unix.TIOCSTI, uintptr(unsafe.Pointer(&c)))
			return errnoErr(e)
		}},
		{"bpf", func() error {
			_, _, e := unix.Syscall(unix.SYS_BPF, 0, 0, 0)
			return errnoErr(e)
		}},
		{"keyctl", func() error {
			_, err := unix.KeyctlGetKeyringID(unix.KEY_SPEC_USER_KEYRING, false)
			return err
		}},
	}
	attempts = append(attempts, viewAttempts()...)
	for _, a := range attempts {
		if err := a.try(); err != nil {
			fmt.Printf("RESULT %s failed: %v\n", a.name, err)
		} else {
			fmt.Printf("RESULT %s ok\n", a.name)
		}
	}
	return 0
}

func errnoErr(e syscall.Errno) error {
	if e != 0 {
		return e
	}
	return nil
}

func expectContent(path, want string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if string(b) != want {
		return fmt.Errorf("read %q, want %q", b, want)
	}
	return nil
}

func writeAndCheck(path string) error {
	if err := os.WriteFile(path, []byte("written"), 0o644); err != nil {
		return err
	}
	return expectContent(path, "written")
}

func dial(network, addr string) error {
	c, err := net.DialTimeout(network, addr, 2*time.Second)
	if err != nil {
		return err
	}
	c.Close()
	return nil
}

func socket(domain, typ, proto int) error {
	fd, err := unix.Socket(domain, typ, proto)
	if err != nil {
		return err
	}
	unix.Close(fd)
	return nil
}

func openClose(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	return f.Close()
}

func ptraceAttach(pid int) error {
	if err := unix.PtraceAttach(pid); err != nil {
		return err
	}
	unix.PtraceDetach(pid)
	return nil
}

// connectGet opens a CONNECT tunnel to target through the proxy and fetches
// "/" over it, succeeding only on the host's answer.
func connectGet(proxy, target string) error {
	if proxy == "" {
		return errors.New("no HTTPS_PROXY")
	}
	c, err := net.DialTimeout("tcp", proxy, 2*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: "CONNECT"})
	if err != nil {
		return err
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("proxy answered %s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	b, _ := io.ReadAll(br)
	if !strings.Contains(string(b), "host-http-ok") {
		return fmt.Errorf("tunnel answered %q", b)
	}
	return nil
}

// plainGet sends an absolute-form GET through the proxy.
func plainGet(proxy, url string) error {
	c, err := net.DialTimeout("tcp", proxy, 2*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", url)
	b, _ := io.ReadAll(c)
	if !strings.Contains(string(b), "host-http-ok") {
		return fmt.Errorf("proxy answered %q", firstLine(b))
	}
	return nil
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(string(b), "\r\n")
	return s
}

// hostResolver is the egress proxy's resolver in these tests: two
// public-looking names that resolve to loopback.
type hostResolver struct{}

func (hostResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	switch host {
	case "listed.example.com", "public.example.com":
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// TestHostileServer runs the hostile server in the sandbox and checks that
// every attack failed and every allowed action worked.
func TestHostileServer(t *testing.T) {
	requireSandbox(t)
	name, value, _ := strings.Cut(hostSecret, "=")
	t.Setenv(name, value)

	home, readDir, writeDir, outside, tmp, sockDir := tempDir(t), tempDir(t), tempDir(t), tempDir(t), tempDir(t), tempDir(t)
	secret := filepath.Join(home, ".ssh", "id_rsa")
	must(t, os.MkdirAll(filepath.Dir(secret), 0o700))
	must(t, os.WriteFile(secret, []byte("-----BEGIN OPENSSH PRIVATE KEY-----\n"), 0o600))
	must(t, os.WriteFile(filepath.Join(readDir, "notes.txt"), []byte("notes"), 0o644))
	must(t, os.Symlink(secret, filepath.Join(writeDir, "escape")))
	viewEnv := viewFixture(t, outside)

	// A web server on the host's loopback, and a second port that is not
	// listed.
	hl, err := net.Listen("tcp", "0.0.0.0:0")
	must(t, err)
	go http.Serve(hl, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "host-http-ok") }))
	defer hl.Close()
	port := strconv.Itoa(hl.Addr().(*net.TCPAddr).Port)
	ql, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer ql.Close()
	qport := strconv.Itoa(ql.Addr().(*net.TCPAddr).Port)

	// A stand-in for ssh-agent: a unix socket in the home directory.
	agent := filepath.Join(home, "agent.sock")
	al, err := net.Listen("unix", agent)
	must(t, err)
	defer al.Close()

	// The egress proxy, on its unix socket.
	var mu sync.Mutex
	var events []egress.Event
	p, err := egress.New([]string{"127.0.0.1:" + port, "listed.example.com:" + port, "public.example.com:" + qport}, func(e egress.Event) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	})
	must(t, err)
	p.Resolver = hostResolver{}
	sock := filepath.Join(sockDir, "egress.sock")
	el, err := net.Listen("unix", sock)
	must(t, err)
	go p.Serve(el)
	defer p.Close()

	cmd := selfCommand(t, "hostile",
		"HOME="+home, "HT_SECRET="+secret, "HT_READ="+readDir, "HT_WRITE="+writeDir,
		"HT_OUTSIDE="+outside, "HT_TMP="+tmp, "HT_PORT="+port, "HT_QPORT="+qport,
		"HT_HOSTPID="+strconv.Itoa(os.Getpid()), "HT_HOSTIP="+hostIP(), "HT_AGENT="+agent, "HT_EGRESS="+sock)
	cmd.Env = append(cmd.Env, viewEnv...)
	exe, _ := os.Executable()
	err = sandbox.Command(cmd, sandbox.Spec{
		Read: []string{readDir}, Write: []string{writeDir}, Tmp: tmp,
		Network: true, EgressSocket: sock,
		Protect: []string{home, exe},
	})
	must(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hostile server: %v\nstderr:\n%s", err, stderr.String())
	}
	results := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "RESULT "); ok {
			name, verdict, _ := strings.Cut(rest, " ")
			results[name] = verdict
		}
	}
	if len(results) < 50 {
		t.Fatalf("only %d results:\n%s\nstderr:\n%s", len(results), out, stderr.String())
	}
	names := slices.Sorted(maps.Keys(results))
	for _, name := range names {
		verdict := results[name]
		allowed := strings.HasPrefix(name, "allowed/")
		switch {
		case allowed && verdict != "ok":
			t.Errorf("%s: should work, but %s", name, verdict)
		case !allowed && verdict == "ok":
			t.Errorf("ESCAPE %s: the attack worked", name)
		default:
			t.Logf("%-36s %s", name, verdict)
		}
	}
	if _, err := os.Stat("/tmp/mcpform-sandbox-escape"); err == nil {
		os.Remove("/tmp/mcpform-sandbox-escape")
		t.Error("ESCAPE: /tmp/mcpform-sandbox-escape exists")
	}

	// The proxy audited allowed and refused connections alike.
	mu.Lock()
	defer mu.Unlock()
	var allowed, refused int
	for _, e := range events {
		if e.Allowed {
			allowed++
		} else {
			refused++
		}
	}
	if allowed < 3 || refused < 5 {
		t.Errorf("audit saw %d allowed and %d refused connections, want at least 3 and 5: %+v", allowed, refused, events)
	}
}

// hostIP returns a non-loopback IPv4 address of this host, or "".
func hostIP() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	return ""
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// nonet is a server without network: no proxy variables, nothing listening
// at ProxyAddr, only lo.
func nonet() int {
	for _, a := range []attempt{
		{"proxy-variable-set", func() error {
			if v := os.Getenv("HTTPS_PROXY") + os.Getenv("https_proxy") + os.Getenv("ALL_PROXY"); v != "" {
				return nil
			}
			return errors.New("unset")
		}},
		{"dial-proxy-addr", func() error { return dial("tcp", sandbox.ProxyAddr) }},
		{"dial-host-port", func() error { return dial("tcp", "127.0.0.1:"+os.Getenv("HT_PORT")) }},
		{"dial-host-ip", func() error { return dial("tcp", net.JoinHostPort(os.Getenv("HT_HOSTIP"), os.Getenv("HT_PORT"))) }},
	} {
		if err := a.try(); err != nil {
			fmt.Printf("RESULT %s failed: %v\n", a.name, err)
		} else {
			fmt.Printf("RESULT %s ok\n", a.name)
		}
	}
	return 0
}

func TestNoNetwork(t *testing.T) {
	requireSandbox(t)
	hl, err := net.Listen("tcp", "0.0.0.0:0")
	must(t, err)
	defer hl.Close()
	port := strconv.Itoa(hl.Addr().(*net.TCPAddr).Port)
	ip := hostIP()
	if ip == "" {
		ip = "127.0.0.2"
	}
	cmd := selfCommand(t, "nonet", "HT_PORT="+port, "HT_HOSTIP="+ip)
	must(t, sandbox.Command(cmd, sandbox.Spec{Tmp: tempDir(t)}))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	n := 0
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "RESULT "); ok {
			n++
			if strings.HasSuffix(rest, " ok") {
				t.Errorf("ESCAPE %s", rest)
			} else {
				t.Log(rest)
			}
		}
	}
	if n != 4 {
		t.Fatalf("got %d results:\n%s", n, out)
	}
}
