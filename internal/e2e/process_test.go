package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpform/mcpform/internal/hostile"
	"github.com/mcpform/mcpform/lock"
)

// startClientSide starts argv as an MCP client starts a server (or
// `mcpform run`): its stdin and stdout are pipes. With leak, the process
// also gets a copy of its stdout as fd 3, as a server would from an mcpform
// that leaked the client's stream, or mcpform from a careless client.
func startClientSide(t *testing.T, argv, env []string, leak bool) *proc {
	t.Helper()
	p := newProc(t, argv, env)
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stdout = outW
	if leak {
		p.cmd.ExtraFiles = []*os.File{outW}
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	outW.Close()
	p.readLines(outR)
	return p
}

// e2eSetup writes the hostile server's config and, for a run through
// mcpform, a lock holding it as "main"; it returns the argv to start.
func e2eSetup(t *testing.T, cfg hostile.Config, through bool) (argv, env []string) {
	t.Helper()
	dir := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "main.json")
	data, _ := json.Marshal(cfg)
	if err := os.WriteFile(cfgPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	env = append(os.Environ(), "HOME="+dir, "XDG_STATE_HOME="+filepath.Join(dir, "state"))
	server := []string{self, "__hostile", cfgPath}
	if !through {
		return server, env
	}
	m := mode{name: t.Name(), server: cfg}
	lockFile := &lock.File{Servers: map[string]*lock.Entry{"main": entryFor(t, "main", m, &cfg, server, &modeEnv{dir: dir, home: dir})}}
	lockPath := filepath.Join(dir, "mcp.lock")
	if err := lock.Save(lockPath, lockFile); err != nil {
		t.Fatal(err)
	}
	return []string{mcpformBinary(t), "run", "-lock", lockPath, "-audit", filepath.Join(dir, "audit.jsonl"), "main"}, env
}

func handshake(p *proc, tr *strings.Builder) {
	p.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`)
	p.await("0", 10*time.Second, tr, "main")
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// No descriptor but 0, 1 and 2 reaches a server without a sandbox
// (docs/GUARANTEES.md, section 1): the hostile server writes a notification
// to every descriptor above 2 it holds. The control gives it a copy of its
// stdout as fd 3, and the client reads the notification; through mcpform,
// whose stdio are the client's pipes (and, in leaked-by-client, with such
// a copy handed to mcpform itself), it finds none.
func TestServerGetsOnlyStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("builds mcpform")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the server lists its descriptors in /proc")
	}
	cfg := hostile.Config{Tools: []json.RawMessage{json.RawMessage(echoTool)}, Actions: []hostile.Action{{Do: "fds"}}}
	run := func(t *testing.T, through, leak bool) string {
		argv, env := e2eSetup(t, cfg, through)
		p := startClientSide(t, argv, env, leak)
		var tr strings.Builder
		handshake(p, &tr)
		p.send(call(1, "echo", `{"text":"hi"}`))
		p.await("1", 10*time.Second, &tr, "main")
		p.stop()
		return tr.String() + "stderr: " + p.stderr.String()
	}
	written := hostile.Marker + " written to fd"
	t.Run("control", func(t *testing.T) {
		tr := run(t, false, true)
		if !strings.Contains(tr, written+" 3") {
			t.Fatalf("control: the notification written to fd 3 did not reach the client, so this test shows nothing:\n%s", tr)
		}
	})
	for _, c := range []struct {
		name string
		leak bool
	}{{"pipes", false}, {"leaked-by-client", true}} {
		t.Run(c.name, func(t *testing.T) {
			tr := run(t, true, c.leak)
			if strings.Contains(tr, written) {
				t.Errorf("a notification the server wrote past the proxy reached the client:\n%s", tr)
			}
			if !strings.Contains(tr, "inherited fds above 2: none") {
				t.Errorf("the server holds descriptors above 2 (or did not say):\n%s", tr)
			}
		})
	}
}

// A server that exits mid-call while a grandchild holds its stdout
// (docs/GUARANTEES.md, section 12): without a sandbox, the call is answered
// with an error and the grandchild ends, also one in a session of its own.
// The control (no mcpform) shows the grandchild holding the stream: no
// answer, no end of output, and it outlives the server.
func TestServerExitEndsDescendants(t *testing.T) {
	if testing.Short() {
		t.Skip("builds mcpform")
	}
	if runtime.GOOS != "linux" {
		t.Skip("descendants are found through Linux's child subreaper")
	}
	for _, c := range []struct{ name, method string }{{"grandchild-holds-stdout", ""}, {"setsid-grandchild", "setsid"}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			run := func(t *testing.T, through bool, wait time.Duration) (string, int, *proc) {
				pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
				cfg := hostile.Config{Tools: []json.RawMessage{json.RawMessage(echoTool)}, Actions: []hostile.Action{{Do: "orphan", Arg: pidFile, Method: c.method}}}
				argv, env := e2eSetup(t, cfg, through)
				p := startClientSide(t, argv, env, false)
				var tr strings.Builder
				handshake(p, &tr)
				p.send(call(1, "echo", `{"text":"hi"}`))
				p.await("1", wait, &tr, "main")
				data, err := os.ReadFile(pidFile)
				if err != nil {
					t.Fatalf("the server left no grandchild: %v\n%s\nstderr: %s", err, tr.String(), p.stderr.String())
				}
				pid, _ := strconv.Atoi(string(data))
				t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
				return tr.String(), pid, p
			}
			t.Run("control", func(t *testing.T) {
				tr, pid, _ := run(t, false, 2*time.Second)
				if !strings.Contains(tr, "NO ANSWER to 1 within") {
					t.Errorf("control: the call was answered or the stream ended; the grandchild did not hold it:\n%s", tr)
				}
				if !alive(pid) {
					t.Errorf("control: the grandchild %d did not outlive the server", pid)
				}
			})
			t.Run("mcpform", func(t *testing.T) {
				// Well under the hour the grandchild would hold the
				// stream: the bound is only there to end a failing run.
				tr, pid, p := run(t, true, 30*time.Second)
				if !strings.Contains(tr, `"id":1,"error":{"code":-32603`) {
					t.Errorf("the call in flight got no -32603 when the server exited:\n%s\nstderr: %s", tr, p.stderr.String())
				}
				if !ends(pid) {
					t.Errorf("the grandchild %d still runs after the server exited", pid)
				}
				p.stop()
				if !ends(pid) {
					t.Errorf("the grandchild %d outlived mcpform run", pid)
				}
			})
		})
	}
}

// ends reports whether pid stops running within a few seconds. The call's
// answer can reach the client before a killed grandchild is done exiting:
// it closes its descriptors (ending the server's output, which answers the
// call) before the kernel makes it a zombie, and on a loaded machine the
// client can read the answer in between.
func ends(pid int) bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if !alive(pid) {
			return true
		}
	}
	return false
}

// alive reports whether pid runs (a zombie, dead but not yet reaped by
// its new parent, does not).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, after, ok := strings.Cut(string(stat), ") ")
	return ok && !strings.HasPrefix(after, "Z")
}
