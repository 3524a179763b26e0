//go:build linux

package sandbox_test

import (
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpform/mcpform/runtime/sandbox"
	"golang.org/x/sys/unix"
)

// x32 makes a getpid through the x32 ABI; the filter must kill the process.
func x32() int {
	if runtime.GOARCH != "amd64" {
		return 0
	}
	unix.RawSyscall(unix.SYS_GETPID|0x40000000, 0, 0, 0)
	return 0 // reached only if the filter let it through
}

// spawnGrandchild starts a sleeper that detaches (own session, SIGHUP
// ignored) and holds a lock, waits until it holds it, and then exits (mode
// "spawn") or waits forever (SPAWN_WAIT set).
func spawnGrandchild() int {
	exe, _ := os.Executable()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "SANDBOXTEST_MODE=sleeper")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		os.Stderr.WriteString("starting grandchild: " + err.Error() + "\n")
		return 1
	}
	ready := filepath.Join(os.Getenv("HT_WRITE"), "ready")
	for i := 0; i < 500; i++ {
		if _, err := os.Stat(ready); err == nil {
			os.Stdout.WriteString("grandchild ready\n")
			if os.Getenv("SPAWN_WAIT") != "" {
				select {}
			}
			return 0
		}
		time.Sleep(10 * time.Millisecond)
	}
	os.Stderr.WriteString("grandchild never got ready\n")
	return 1
}

// sleeper takes the lock, says so, and sleeps forever, ignoring SIGHUP and
// SIGTERM.
func sleeper() int {
	signal.Ignore(syscall.SIGHUP, syscall.SIGTERM)
	dir := os.Getenv("HT_WRITE")
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return 1
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		return 1
	}
	os.WriteFile(filepath.Join(dir, "ready"), nil, 0o644)
	select {}
}

// lockFree reports whether the sleeper's lock can be taken within d: only
// when no sleeper is alive.
func lockFree(t *testing.T, dir string, d time.Duration) bool {
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("the grandchild never created its lock file: %v", err)
	}
	defer f.Close()
	for end := time.Now().Add(d); ; {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return true
		}
		if time.Now().After(end) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func sandboxed(t *testing.T, cmd *exec.Cmd, spec sandbox.Spec) *exec.Cmd {
	t.Helper()
	if spec.Tmp == "" {
		spec.Tmp = tempDir(t)
	}
	if err := sandbox.Command(cmd, spec); err != nil {
		t.Fatal(err)
	}
	return cmd
}

func TestGrandchildDiesWithServer(t *testing.T) {
	requireSandbox(t)
	dir := tempDir(t)
	cmd := sandboxed(t, selfCommand(t, "spawn", "HT_WRITE="+dir), sandbox.Spec{Write: []string{dir}})
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "grandchild ready") {
		t.Fatalf("server: %v\n%s", err, out)
	}
	if !lockFree(t, dir, 2*time.Second) {
		t.Fatal("ESCAPE: a grandchild still holds its lock after the server exited")
	}
}

// startUntilReady starts cmd and waits for it to say that its grandchild
// holds the lock; who names cmd in the failure, which kills it.
func startUntilReady(t *testing.T, cmd *exec.Cmd, who string) {
	t.Helper()
	r, w, _ := os.Pipe()
	cmd.Stdout = w
	must(t, cmd.Start())
	w.Close()
	buf := make([]byte, 64)
	n, _ := r.Read(buf)
	if !strings.Contains(string(buf[:n]), "grandchild ready") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("%s said %q", who, buf[:n])
	}
}

func TestKillingSandboxKillsTree(t *testing.T) {
	requireSandbox(t)
	dir := tempDir(t)
	cmd := sandboxed(t, selfCommand(t, "spawn", "HT_WRITE="+dir, "SPAWN_WAIT=1"), sandbox.Spec{Write: []string{dir}})
	startUntilReady(t, cmd, "server")
	if lockFree(t, dir, 100*time.Millisecond) {
		t.Fatal("lock free while the grandchild should hold it")
	}
	cmd.Process.Kill()
	cmd.Wait()
	if !lockFree(t, dir, 2*time.Second) {
		t.Fatal("ESCAPE: a grandchild survived killing the sandbox")
	}
}

func TestExitStatus(t *testing.T) {
	requireSandbox(t)
	cmd := sandboxed(t, selfCommand(t, "exit3"), sandbox.Spec{})
	var ee *exec.ExitError
	if err := cmd.Run(); !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("exit: %v, want status 3", err)
	}
}

func TestForeignSyscallABIKills(t *testing.T) {
	requireSandbox(t)
	if runtime.GOARCH != "amd64" {
		t.Skip("x32 exists only on amd64")
	}
	cmd := sandboxed(t, selfCommand(t, "x32"), sandbox.Spec{})
	var ee *exec.ExitError
	if err := cmd.Run(); !errors.As(err, &ee) || ee.ExitCode() != 128+int(syscall.SIGSYS) {
		t.Fatalf("x32 syscall: %v, want exit status %d (killed by SIGSYS)", err, 128+int(syscall.SIGSYS))
	}
}

func TestCommandRefuses(t *testing.T) {
	requireSandbox(t)
	home, tmp := tempDir(t), tempDir(t)
	lockDir := filepath.Join(home, "proj")
	must(t, os.MkdirAll(lockDir, 0o755))
	for name, spec := range map[string]sandbox.Spec{
		"write covers home":         {Write: []string{home}, Tmp: tmp, Protect: []string{home}},
		"write covers lock dir":     {Write: []string{lockDir}, Tmp: tmp, Protect: []string{filepath.Join(lockDir, "mcp.lock"), home}},
		"write is root":             {Write: []string{"/"}, Tmp: tmp, Protect: []string{home}},
		"tmp covers home":           {Tmp: home, Protect: []string{home}},
		"write path missing":        {Write: []string{filepath.Join(tmp, "nope")}, Tmp: tmp},
		"read path relative":        {Read: []string{"notes"}, Tmp: tmp},
		"read path unclean":         {Read: []string{tmp + "/../x"}, Tmp: tmp},
		"no tmp":                    {},
		"network without socket":    {Tmp: tmp, Network: true},
		"write via symlink to home": {Write: []string{symlinkTo(t, home)}, Tmp: tmp, Protect: []string{home}},
		"egress socket in tmp":      {Tmp: tmp, Network: true, EgressSocket: filepath.Join(tmp, "egress.sock")},
		"egress socket under write": {Write: []string{home}, Tmp: tmp, Network: true, EgressSocket: filepath.Join(lockDir, "egress.sock")},
	} {
		if err := sandbox.Command(selfCommand(t, "true"), spec); err == nil {
			t.Errorf("%s: Command accepted %+v", name, spec)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
	cmd := selfCommand(t, "true")
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	if err := sandbox.Command(cmd, sandbox.Spec{Tmp: tmp}); err == nil {
		t.Error("Command accepted a command with SysProcAttr")
	}
	cmd = selfCommand(t, "true")
	cmd.ExtraFiles = []*os.File{os.Stdin}
	if err := sandbox.Command(cmd, sandbox.Spec{Tmp: tmp}); err == nil {
		t.Error("Command accepted a command with ExtraFiles")
	}
}

func symlinkTo(t *testing.T, target string) string {
	l := filepath.Join(tempDir(t), "link")
	must(t, os.Symlink(target, l))
	return l
}

// TestPlantedSymlinkDoesNotWidenGrants: a server that could write W planted
// W/docs -> ~/.ssh on an earlier run; a later run whose policy reads W/docs
// must not be granted ~/.ssh.
func TestPlantedSymlinkDoesNotWidenGrants(t *testing.T) {
	requireSandbox(t)
	home, w := tempDir(t), tempDir(t)
	ssh := filepath.Join(home, ".ssh")
	must(t, os.MkdirAll(ssh, 0o700))
	must(t, os.WriteFile(filepath.Join(ssh, "id_rsa"), []byte("private key"), 0o600))
	must(t, os.Symlink(ssh, filepath.Join(w, "docs")))
	must(t, os.Symlink(filepath.Join(ssh, "id_rsa"), filepath.Join(w, "server.js")))
	for name, spec := range map[string]sandbox.Spec{
		"read path":  {Read: []string{filepath.Join(w, "docs")}, Write: []string{w}, Protect: []string{home}},
		"write path": {Write: []string{w, filepath.Join(w, "docs")}, Protect: []string{home}},
	} {
		cmd := sandboxed(t, selfCommand(t, "readfile", "HT_FILE="+filepath.Join(w, "docs", "id_rsa")), spec)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "READ failed") {
			t.Errorf("%s: %v %s", name, err, out)
		}
	}
	// The program's script argument, planted the same way.
	cmd := selfCommand(t, "readfile", "HT_FILE="+filepath.Join(ssh, "id_rsa"))
	cmd.Args = append(cmd.Args, filepath.Join(w, "server.js"))
	cmd = sandboxed(t, cmd, sandbox.Spec{Write: []string{w}, Protect: []string{home}})
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "READ failed") {
		t.Errorf("script argument: %v %s", err, out)
	}
}

// launcher stands in for mcpform: it starts a sandboxed "spawn" server that
// keeps a grandchild, relays its output, and waits.
func launcher() int {
	exe, _ := os.Executable()
	cmd := exec.Command(exe)
	cmd.Env = []string{"SANDBOXTEST_MODE=spawn", "SPAWN_WAIT=1", "HT_WRITE=" + os.Getenv("HT_WRITE")}
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stderr
	if err := sandbox.Command(cmd, sandbox.Spec{Write: []string{os.Getenv("HT_WRITE")}, Tmp: os.Getenv("HT_TMP")}); err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	if err := cmd.Run(); err != nil {
		return 1
	}
	return 0
}

// TestLauncherDeathKillsSandbox: when mcpform dies (SIGKILL, no cleanup),
// the parent-death signal kills stage 1 and with it the whole sandbox.
func TestLauncherDeathKillsSandbox(t *testing.T) {
	requireSandbox(t)
	dir := tempDir(t)
	cmd := selfCommand(t, "launcher", "HT_WRITE="+dir, "HT_TMP="+tempDir(t))
	startUntilReady(t, cmd, "launcher")
	cmd.Process.Kill()
	cmd.Wait()
	if !lockFree(t, dir, 2*time.Second) {
		t.Fatal("ESCAPE: the sandbox survived the death of its launcher")
	}
}
