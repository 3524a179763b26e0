package runtime

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpform/mcpform/internal/npmtest"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/mcp"
	"github.com/mcpform/mcpform/runtime/audit"
	"github.com/mcpform/mcpform/surface"
)

// Interop: a real client (the MCP inspector's CLI, pinned in testdata/npm)
// lists and calls tools through the mcpform binary, against real servers
// (the npm reference server-everything and the Go SDK notes server), with
// the client in either era. Fakes never stand in for these.

func moduleRoot() string {
	_, file, _, _ := goruntime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..")
}

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// built returns the mcpform binary and the notes server, built once.
func built(t *testing.T) (mcpform, notes string) {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "mcpform-runtime-interop")
		if buildErr != nil {
			return
		}
		for _, b := range [][2]string{{"mcpform", "./cmd/mcpform"}, {"notes", "./examples/servers/notes"}} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(buildDir, b[0]), b[1])
			cmd.Dir = moduleRoot()
			if out, err := cmd.CombinedOutput(); err != nil {
				buildErr = &buildError{b[1], err, string(out)}
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(buildDir, "mcpform"), filepath.Join(buildDir, "notes")
}

type buildError struct {
	pkg string
	err error
	out string
}

func (e *buildError) Error() string { return "go build " + e.pkg + ": " + e.err.Error() + "\n" + e.out }

// lockedEntry probes a real server in era and returns the entry plan and
// apply would lock it as.
func lockedEntry(t *testing.T, name string, argv, env []string, era mcp.Era) *lock.Entry {
	t.Helper()
	return lockedEntryWith(t, name, argv, env, era, nil)
}

// lockedEntryWith is lockedEntry for a server probed, and locked, with the
// client capabilities caps (as mcp.hcl's client_capabilities would).
func lockedEntryWith(t *testing.T, name string, argv, env []string, era mcp.Era, caps json.RawMessage) *lock.Entry {
	t.Helper()
	s, err := mcp.Probe(context.Background(), mcp.ServerSpec{Name: name, Command: argv, Env: env, Era: era, Timeout: 60 * time.Second, ClientCapabilities: caps})
	if err != nil {
		t.Fatalf("probing %s: %v", name, err)
	}
	e, err := surface.Entry(s)
	if err != nil {
		t.Fatal(err)
	}
	e.Command, e.EnvPassthrough = argv, env
	if caps != nil {
		e.Mcpform = &lock.Settings{ClientCapabilities: caps}
	}
	return e
}

// saveLock writes a lock holding entries, by name.
func saveLock(t *testing.T, path string, entries map[string]*lock.Entry) {
	t.Helper()
	if err := lock.Save(path, &lock.File{Generator: "runtime interop test", Servers: entries}); err != nil {
		t.Fatal(err)
	}
}

// lockServer writes a lock holding one real server, probed in era.
func lockServer(t *testing.T, path, name string, argv, env []string, era mcp.Era) {
	t.Helper()
	saveLock(t, path, map[string]*lock.Entry{name: lockedEntry(t, name, argv, env, era)})
}

func TestInteropInspector(t *testing.T) {
	inspector := npmtest.Bin(t, "mcp-inspector")
	everything := npmtest.Bin(t, "mcp-server-everything")
	mcpform, notes := built(t)
	dir := t.TempDir()
	lockPath := filepath.Join(dir, "mcp.lock")
	auditPath := filepath.Join(dir, "audit.jsonl")
	// One lock, three servers: the npm server (legacy), and the Go SDK
	// server locked once in each era.
	merged := map[string]*lock.Entry{
		"everything":   lockedEntry(t, "everything", []string{everything, "stdio"}, []string{"PATH"}, mcp.EraAuto),
		"notes-legacy": lockedEntry(t, "notes-legacy", []string{notes}, nil, mcp.EraLegacy),
		"notes-modern": lockedEntry(t, "notes-modern", []string{notes}, nil, mcp.EraModern),
	}
	saveLock(t, lockPath, merged)
	if !merged["notes-modern"].Modern() || merged["notes-legacy"].Modern() {
		t.Fatal("the notes server was not locked in both eras")
	}

	cases := []struct {
		server, tool string
		args         []string
		listed, got  string
	}{
		{"everything", "echo", []string{"message=hello through mcpform"}, `"name": "echo"`, "hello through mcpform"},
		{"notes-legacy", "search_notes", []string{"query=x"}, `"name": "search_notes"`, `"titles"`},
		{"notes-modern", "search_notes", []string{"query=x"}, `"name": "search_notes"`, `"titles"`},
	}
	for _, c := range cases {
		for _, era := range []string{"legacy", "modern"} {
			t.Run(c.server+"/"+era+"-client", func(t *testing.T) {
				base := []string{"--cli", "--protocol-era", era, mcpform, "run", "-lock", lockPath, "-audit", auditPath, c.server}
				out := runInspector(t, inspector, append(base, "--method", "tools/list"))
				if !strings.Contains(out, c.listed) {
					t.Errorf("tools/list through mcpform run: no %s in:\n%.3000s", c.listed, out)
				}
				args := append(base, "--method", "tools/call", "--tool-name", c.tool)
				for _, a := range c.args {
					args = append(args, "--tool-arg", a)
				}
				out = runInspector(t, inspector, args)
				if !strings.Contains(out, c.got) {
					t.Errorf("tools/call %s through mcpform run: no %s in:\n%.3000s", c.tool, c.got, out)
				}
				// A tool that is not locked is refused by the proxy.
				cmd := exec.Command(inspector, append(base, "--method", "tools/call", "--tool-name", "not_locked")...)
				if b, err := cmd.CombinedOutput(); err == nil && !strings.Contains(string(b), "unknown tool") {
					t.Errorf("an unlocked tool was not refused:\n%s", b)
				}
			})
		}
	}
	f, err := os.Open(auditPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if n, err := audit.Verify(f); err != nil || n == 0 {
		t.Errorf("audit log after the interop runs: %d records, %v", n, err)
	}
}

func runInspector(t *testing.T, inspector string, args []string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, inspector, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mcp-inspector %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Input a server asks for in the middle of a call reaches a real client of
// either era through the mcpform binary, from a real server locked in
// either era (the Go SDK server examples/servers/confirm; the Go SDK client,
// whose elicitation handler is the user): a 2026-07-28 server's
// input_required becomes an elicitation/create request to a legacy
// client, and a legacy server's elicitation/create request becomes the
// call's input_required result for a 2026-07-28 client, whose retry
// mcpform turns back into the answer.
func TestInteropInputRequests(t *testing.T) {
	mcpform, _ := built(t)
	confirm := filepath.Join(t.TempDir(), "confirm")
	build := exec.Command("go", "build", "-o", confirm, "./examples/servers/confirm")
	build.Dir = moduleRoot()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/servers/confirm: %v\n%s", err, out)
	}
	dir := t.TempDir()
	merged := map[string]*lock.Entry{}
	for _, c := range []struct {
		name string
		era  mcp.Era
	}{{"confirm-legacy", mcp.EraLegacy}, {"confirm-modern", mcp.EraModern}} {
		e := lockedEntry(t, c.name, []string{confirm}, nil, c.era)
		e.Mcpform = &lock.Settings{ClientCapabilities: json.RawMessage(`{"elicitation":{}}`)}
		merged[c.name] = e
	}
	lockPath := filepath.Join(dir, "mcp.lock")
	saveLock(t, lockPath, merged)
	for _, server := range []string{"confirm-legacy", "confirm-modern"} {
		for _, version := range []string{"2025-11-25", "2026-07-28"} {
			t.Run(server+"/"+version+"-client", func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				client := sdk.NewClient(&sdk.Implementation{Name: "interop", Version: "1"}, &sdk.ClientOptions{
					ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
						return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"sure": true}}, nil
					},
				})
				cmd := exec.Command(mcpform, "run", "-lock", lockPath, "-audit", filepath.Join(dir, "audit.jsonl"), server)
				cmd.Stderr = &testWriter{t}
				cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, &sdk.ClientSessionOptions{ProtocolVersion: version})
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "delete_all", Arguments: map[string]any{}})
				if err != nil {
					t.Fatalf("delete_all through mcpform run: %v", err)
				}
				var text string
				for _, c := range res.Content {
					if tc, ok := c.(*sdk.TextContent); ok {
						text += tc.Text
					}
				}
				if res.IsError || text != "deleted everything: the user was sure" {
					t.Errorf("delete_all through mcpform run = %q (isError %v); want the user's confirmation", text, res.IsError)
				}
			})
		}
	}
}

// testWriter logs what is written to it (mcpform's stderr) with the test.
type testWriter struct{ t *testing.T }

func (w *testWriter) Write(b []byte) (int, error) {
	w.t.Logf("%s", strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// A rug pull in the middle of a session is quarantined whichever era the
// server was locked in: the Go SDK notes server (-variant rug-later) adds a
// destructive tool after its first search and announces it with
// list_changed, which a 2026-07-28 server sends only on a
// subscriptions/listen stream that asked for it (mcpform opens one). The
// Go SDK client's next call gets the quarantine (-32002), and the new tool
// never reaches it.
func TestInteropRugPullMidSession(t *testing.T) {
	mcpform, notes := built(t)
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		era  mcp.Era
	}{{"notes-legacy", mcp.EraLegacy}, {"notes-modern", mcp.EraModern}} {
		t.Run(c.name, func(t *testing.T) {
			lockPath := filepath.Join(dir, c.name+".lock")
			lockServer(t, lockPath, c.name, []string{notes, "-variant", "rug-later"}, nil, c.era)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			client := sdk.NewClient(&sdk.Implementation{Name: "interop", Version: "1"}, nil)
			cmd := exec.Command(mcpform, "run", "-lock", lockPath, "-audit", filepath.Join(dir, "audit.jsonl"), c.name)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			version := "2025-11-25"
			if c.era == mcp.EraModern {
				version = "2026-07-28"
			}
			cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, &sdk.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "search_notes", Arguments: map[string]any{"query": "x"}}); err != nil {
				t.Fatalf("the first search: %v", err)
			}
			var quarantined bool
			for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
				_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "search_notes", Arguments: map[string]any{"query": "x"}})
				if err != nil && strings.Contains(err.Error(), "quarantined") {
					quarantined = true
					break
				}
			}
			if !quarantined {
				t.Fatalf("the server added a tool mid-session and was not quarantined; mcpform's stderr:\n%s", stderr.String())
			}
			if res, err := cs.ListTools(ctx, nil); err == nil {
				for _, tool := range res.Tools {
					if tool.Name == "delete_all" {
						t.Errorf("the tool the server added mid-session reached the client")
					}
				}
			}
		})
	}
}
