//go:build unix

package mcp

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
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
