package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpform/mcpform/internal/npmtest"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/mcp"
)

// The matrix: the real inspector's CLI (v2 in each of its three eras,
// legacy, modern and auto, and the deprecated v1 inspector-cli) gets the
// same answers through `mcpform run` as direct, for the lists, every
// prompt, every static resource and the tools a real flow needs of each
// server: the npm server-everything (locked legacy: it speaks no
// 2026-07-28), whose get-roots-list asks the client for its roots mid-call
// and whose simulate-research-query needs tasks, and the Go SDK everything
// example locked in each era. Where a direct run fails (server-everything
// to a client pinned to 2026-07-28), the run through mcpform must still
// answer: it speaks the client's era to the server's.
func TestInspectorMatrix(t *testing.T) {
	inspector := npmtest.Bin(t, "mcp-inspector")
	everything := npmtest.Bin(t, "mcp-server-everything")
	mcpform, _ := built(t)
	goEverything := filepath.Join(t.TempDir(), "go-everything")
	build := exec.Command("go", "build", "-o", goEverything, "github.com/modelcontextprotocol/go-sdk/examples/server/everything")
	build.Dir = moduleRoot()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build the Go SDK everything example: %v\n%s", err, out)
	}
	dir := t.TempDir()
	servers := []struct {
		name string
		argv []string
		era  mcp.Era
		caps json.RawMessage // the client capabilities locked
		// deterministic calls: a tool's name, then key=value arguments
		calls [][]string
	}{
		{"everything", []string{everything, "stdio"}, mcp.EraAuto, json.RawMessage(`{"roots":{}}`), [][]string{
			{"echo", "message=through mcpform"},
			{"get-roots-list"},
			{"simulate-research-query", "topic=mcpform"},
		}},
		{"go-legacy", []string{goEverything}, mcp.EraLegacy, nil, [][]string{{"greet", "name=mcpform"}}},
		{"go-modern", []string{goEverything}, mcp.EraModern, nil, [][]string{{"greet", "name=mcpform"}}},
	}
	clients := []struct {
		name    string
		inspect func(args []string) (map[string]any, error)
	}{
		{"legacy", inspectorIn(inspector, "legacy")},
		{"modern", inspectorIn(inspector, "modern")},
		{"auto", inspectorIn(inspector, "auto")},
		{"cli-1.0.3", inspectorV1(t)},
	}
	merged := map[string]*lock.Entry{}
	for _, s := range servers {
		merged[s.name] = lockedEntryWith(t, s.name, s.argv, []string{"PATH"}, s.era, s.caps)
	}
	lockPath := filepath.Join(dir, "mcp.lock")
	saveLock(t, lockPath, merged)
	auditPath := filepath.Join(dir, "audit.jsonl")
	compared := 0
	for _, s := range servers {
		e := merged[s.name]
		var requests [][]string
		for _, l := range []string{"tools/list", "prompts/list", "resources/list", "resources/templates/list"} {
			requests = append(requests, []string{"--method", l})
		}
		for _, p := range e.Prompts {
			req := []string{"--method", "prompts/get", "--prompt-name", p.Key}
			var decl struct {
				Arguments []struct {
					Name     string `json:"name"`
					Required bool   `json:"required"`
				} `json:"arguments"`
			}
			_ = json.Unmarshal(p.JSON, &decl)
			var args []string
			for _, a := range decl.Arguments {
				if a.Required {
					args = append(args, a.Name+"=x")
				}
			}
			if len(args) > 0 {
				req = append(append(req, "--prompt-args"), args...)
			}
			requests = append(requests, req)
		}
		for i, r := range e.Resources {
			if i < 3 {
				requests = append(requests, []string{"--method", "resources/read", "--uri", r.Key})
			}
		}
		for _, c := range s.calls {
			call := []string{"--method", "tools/call", "--tool-name", c[0]}
			for _, a := range c[1:] {
				call = append(call, "--tool-arg", a)
			}
			requests = append(requests, call)
		}
		for _, client := range clients {
			t.Run(s.name+"/"+client.name, func(t *testing.T) {
				lockedOnly := map[string]bool{} // tools this client gets only through the lock
				for _, req := range requests {
					if req[1] == "tools/call" && lockedOnly[req[3]] {
						// The server offers it direct only to a client that
						// declares what the lock declared (roots): through
						// mcpform it must still answer, with nothing to
						// compare it with.
						if _, err := client.inspect(append([]string{mcpform, "run", "-lock", lockPath, "-audit", auditPath, s.name}, req...)); err != nil {
							t.Errorf("%s through mcpform run (locked, not offered direct to this client): %v", strings.Join(req, " "), err)
						}
						continue
					}
					// Both at once: each is mostly a client's and a
					// server's start-up.
					var through map[string]any
					var err error
					var both sync.WaitGroup
					both.Go(func() {
						through, err = client.inspect(append([]string{mcpform, "run", "-lock", lockPath, "-audit", auditPath, s.name}, req...))
					})
					direct, derr := client.inspect(append(append([]string(nil), s.argv...), req...))
					both.Wait()
					switch {
					case err != nil && derr != nil:
						continue // refused both ways (the server's own error)
					case err != nil:
						t.Errorf("%s through mcpform run: %v", strings.Join(req, " "), err)
						continue
					case derr != nil:
						continue // the server does not speak this era: nothing to compare
					}
					if extra := lockedExtra(direct, through); len(extra) > 0 {
						// server-everything offers sampling and elicitation
						// tools only to clients that declare those; the lock
						// holds what was reviewed, whoever asks.
						t.Logf("%s: not in both: %v", strings.Join(req, " "), extra)
						for _, x := range extra {
							if tool, ok := strings.CutPrefix(x, "locked only: name "); ok && req[1] == "tools/list" {
								lockedOnly[tool] = true
							}
						}
					}
					if !reflect.DeepEqual(comparable(direct), comparable(through)) {
						t.Errorf("%s: through mcpform run\n%.1500s\ndirect\n%.1500s", strings.Join(req, " "), mustJSON(comparable(through)), mustJSON(comparable(direct)))
					}
					compared++
				}
			})
		}
	}
	if compared < 30 {
		t.Errorf("only %d answers were compared with direct ones: the matrix shows little", compared)
	}
	t.Logf("%d answers equal direct and through mcpform run", compared)
}

// inspectorIn returns a client that runs the inspector's CLI in era
// against a server command line (then the method's flags).
func inspectorIn(inspector, era string) func(args []string) (map[string]any, error) {
	return func(args []string) (map[string]any, error) {
		return inspect("", inspector, append([]string{"--cli", "--protocol-era", era}, args...))
	}
}

// inspectorV1 returns a client that runs the deprecated inspector-cli 1.0.3
// (legacy only). Its bin starts the whole v1 inspector, which testdata/npm
// does not hold, so the CLI's own entry point runs; that reads its
// package.json for clientInfo, found only when "../package.json" exists
// from its working directory, so it runs in testdata/npm/node_modules.
func inspectorV1(t *testing.T) func(args []string) (map[string]any, error) {
	modules := filepath.Dir(filepath.Dir(npmtest.Bin(t, "mcp-inspector-cli")))
	entry := filepath.Join(modules, "@modelcontextprotocol", "inspector-cli", "build", "index.js")
	return func(args []string) (map[string]any, error) {
		return inspect(modules, "node", append([]string{entry}, args...))
	}
}

// inspect runs an inspector command in dir, bounded to a minute, and
// returns the result it printed.
func inspect(dir, name string, args []string) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%v: %.500s", err, out)
	}
	i := strings.IndexByte(string(out), '{')
	if i < 0 {
		return nil, fmt.Errorf("no JSON result: %.500s", out)
	}
	var res map[string]any
	if err := json.Unmarshal(out[i:], &res); err != nil {
		return nil, fmt.Errorf("not one JSON result: %v: %.500s", err, out)
	}
	if _, failed := res["error"]; failed && len(res) == 1 {
		return nil, fmt.Errorf("%.500s", out)
	}
	return res, nil
}

// comparable is a result without what an era adds (resultType, cache hints,
// _meta) or a list's paging, its lists in the lock's order (by name or
// URI): what both must carry the same.
func comparable(res map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range res {
		switch k {
		case "resultType", "ttlMs", "cacheScope", "_meta", "nextCursor":
		case "tools", "prompts", "resources", "resourceTemplates":
			list, _ := v.([]any)
			list = append([]any(nil), list...)
			for i, it := range list {
				if m, ok := it.(map[string]any); ok && m["execution"] != nil {
					// The 2026-07-28 encoding has no execution: a client of
					// that era drops it (auto: direct falls back to legacy
					// with server-everything, through run it does not).
					c := map[string]any{}
					for k, v := range m {
						if k != "execution" {
							c[k] = v
						}
					}
					list[i] = c
				}
			}
			sort.Slice(list, func(i, j int) bool { return itemKey(list[i]) < itemKey(list[j]) })
			out[k] = list
		default:
			out[k] = v
		}
	}
	return out
}

// lockedExtra keeps in both lists only the items both have, and returns
// the keys of the others: server-everything offers its sampling and
// elicitation tools only to clients that declare those capabilities, while
// the lock holds what was reviewed whoever asks (more, or fewer, than a
// given client would get direct).
func lockedExtra(direct, through map[string]any) []string {
	var extra []string
	for _, k := range []string{"tools", "prompts", "resources", "resourceTemplates"} {
		dl, _ := direct[k].([]any)
		tl, _ := through[k].([]any)
		if dl == nil && tl == nil {
			continue
		}
		in := func(list []any) map[string]bool {
			m := map[string]bool{}
			for _, it := range list {
				m[itemKey(it)] = true
			}
			return m
		}
		dk, tk := in(dl), in(tl)
		both := func(list []any, other map[string]bool, side string) []any {
			kept := list[:0:0]
			for _, it := range list {
				if other[itemKey(it)] {
					kept = append(kept, it)
				} else {
					extra = append(extra, side+" "+strings.ReplaceAll(itemKey(it), "\x00", " "))
				}
			}
			return kept
		}
		direct[k], through[k] = both(dl, tk, "direct only:"), both(tl, dk, "locked only:")
	}
	return extra
}

func itemKey(v any) string {
	m, _ := v.(map[string]any)
	for _, k := range []string{"name", "uri", "uriTemplate"} {
		if s, ok := m[k].(string); ok {
			return k + "\x00" + s
		}
	}
	return ""
}

func mustJSON(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}
