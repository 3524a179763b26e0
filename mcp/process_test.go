//go:build unix

package mcp

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestStartPassesOnlyNamedEnv(t *testing.T) {
	p, err := Start(context.Background(), ServerSpec{
		Command: []string{"env"},
		Env:     []string{"FOO", "UNSET"},
		LookupEnv: func(name string) (string, bool) {
			if name == "FOO" {
				return "bar baz", true
			}
			return "", false
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(p.Stdout)
	p.Close()
	if string(out) != "FOO=bar baz\n" {
		t.Errorf("environment %q, want only FOO", out)
	}
}

// TestCloseEscalates: a server that ignores the end of stdin and SIGTERM is
// killed with its whole process group.
func TestCloseEscalates(t *testing.T) {
	var passthrough bytes.Buffer
	p, err := Start(context.Background(), ServerSpec{
		Command:       []string{"sh", "-c", `trap "" TERM; sleep 60 & echo $!; echo started >&2; while :; do sleep 1; done`},
		ShutdownGrace: 200 * time.Millisecond,
		Stderr:        &passthrough,
		LookupEnv:     func(string) (string, bool) { return "", false },
		Env:           nil,
	})
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(p.Stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	child, _ := strconv.Atoi(strings.TrimSpace(line))
	start := time.Now()
	err = p.Close()
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Close took %v", d)
	}
	if err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("Close = %v, want killed", err)
	}
	if tail := p.StderrTail(); tail != "started\n" || passthrough.String() != "started\n" {
		t.Errorf("stderr tail %q, passthrough %q", tail, passthrough.String())
	}
	// The grandchild was in the group: it is gone too (allow for reaping).
	for i := 0; ; i++ {
		if err := syscall.Kill(child, 0); err == syscall.ESRCH || zombie(child) {
			break
		}
		if i == 50 {
			t.Fatalf("child %d of the server survived Close", child)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCloseGraceful: a server that exits when stdin closes is never
// signalled.
func TestCloseGraceful(t *testing.T) {
	p, err := Start(context.Background(), ServerSpec{Command: []string{"cat"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("Close = %v, want a clean exit", err)
	}
}

func TestStartCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p, err := Start(ctx, ServerSpec{Command: []string{"sleep", "60"}, ShutdownGrace: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-p.Exited():
	case <-time.After(3 * time.Second):
		t.Fatal("server still running after its context ended")
	}
}

// zombie reports whether pid has died but not been reaped (its new parent,
// init in a container, may be slow to or never reap it).
func zombie(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, after, ok := strings.Cut(string(stat), ") ")
	return ok && strings.HasPrefix(after, "Z")
}

// A server gets no descriptor but 0, 1 and 2 (docs/GUARANTEES.md, section
// 1), even one this process holds without close-on-exec, such as a copy of
// the client's stream made by a raw dup or inherited from the client.
func TestStartPassesOnlyStdio(t *testing.T) {
	fd := rawDup(t)
	n := strconv.Itoa(fd)
	check := `if [ -e /proc/$$/fd/` + n + ` ] || [ -e /dev/fd/` + n + ` ]; then echo inherited; else echo none; fi`
	// The control: a process started without Start inherits the descriptor.
	if out, err := exec.Command("sh", "-c", check).Output(); err != nil || string(out) != "inherited\n" {
		t.Fatalf("control: a child did not inherit fd %d (%q, %v), so this test shows nothing", fd, out, err)
	}
	p, err := Start(context.Background(), ServerSpec{Command: []string{"sh", "-c", check}})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(p.Stdout)
	p.Close()
	if string(out) != "none\n" {
		t.Errorf("the server inherited fd %d: %q", fd, out)
	}
}

// What a server leaves behind ends with it (docs/GUARANTEES.md, section
// 12), also a descendant in a session of its own, which its process group
// does not hold: once the server exits, its output ends (the grandchild
// that held it is gone) and Exited is closed only after that. The control
// starts the same server without Start: its grandchild outlives it.
func TestServerExitEndsDescendants(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid command")
	}
	for _, c := range []struct{ name, script string }{
		{"grandchild-holds-stdout", `sleep 3600 & echo $!`},
		{"setsid-grandchild", `setsid sleep 3600 & echo $!`},
		{"setsid-grandchild-on-close", `setsid sleep 3600 & echo $!; exec cat >/dev/null`},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctl := exec.Command("sh", "-c", c.script)
			ctl.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			ctlOut, _ := ctl.StdoutPipe()
			ctlIn, _ := ctl.StdinPipe()
			if err := ctl.Start(); err != nil {
				t.Fatal(err)
			}
			line, _ := bufio.NewReader(ctlOut).ReadString('\n')
			ctlIn.Close()
			ctl.Wait()
			orphan, _ := strconv.Atoi(strings.TrimSpace(line))
			defer syscall.Kill(orphan, syscall.SIGKILL)
			if orphan == 0 || !running(orphan) {
				t.Fatalf("control: the grandchild (%q) did not outlive its server, so this test shows nothing", line)
			}
			syscall.Kill(-orphan, syscall.SIGKILL)
			syscall.Kill(orphan, syscall.SIGKILL)

			p, err := Start(context.Background(), ServerSpec{Command: []string{"sh", "-c", c.script}, ShutdownGrace: 500 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			out := bufio.NewReader(p.Stdout)
			line, err = out.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			child, _ := strconv.Atoi(strings.TrimSpace(line))
			defer syscall.Kill(child, syscall.SIGKILL)
			if strings.HasSuffix(c.name, "on-close") {
				p.Close()
			} else {
				// The end of output, which the grandchild held (for an
				// hour: the bound only ends a failing test).
				eof := make(chan error, 1)
				go func() { _, err := io.ReadAll(out); eof <- err }()
				select {
				case err := <-eof:
					if err != nil {
						t.Errorf("reading the server's output: %v", err)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("the server's output did not end after it exited")
				}
			}
			<-p.Exited()
			if running(child) {
				t.Errorf("the server's grandchild %d still runs after the server exited", child)
			}
			p.Close()
		})
	}
}

// running reports whether pid runs: not gone, and not a zombie.
func running(pid int) bool {
	return syscall.Kill(pid, 0) == nil && !zombie(pid)
}
