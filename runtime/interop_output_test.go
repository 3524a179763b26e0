package runtime

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/mcp"
)

// TestInteropOutputSchema runs the Go SDK notes server, whose tools declare
// output schemas (mcp.AddTool with a typed Out), through the mcpform binary
// in each era, and compares every call's result with the same call made
// straight to the server: the conforming results pass the output schema
// check unchanged, and the audit log records them as ok.
func TestInteropOutputSchema(t *testing.T) {
	mcpform, notes := built(t)
	dir := t.TempDir()
	for _, c := range []struct {
		name    string
		era     mcp.Era
		version string
	}{{"notes-legacy", mcp.EraLegacy, "2025-11-25"}, {"notes-modern", mcp.EraModern, "2026-07-28"}} {
		t.Run(c.name, func(t *testing.T) {
			lockPath := filepath.Join(dir, c.name+".lock")
			auditPath := filepath.Join(dir, c.name+".audit.jsonl")
			entry := lockedEntry(t, c.name, []string{notes}, nil, c.era)
			for _, tool := range []string{"add_note", "search_notes"} {
				it, ok := entry.Find(lock.Tools, tool)
				if !ok || !strings.Contains(string(it.JSON), `"outputSchema"`) {
					t.Fatalf("the notes server's %s is locked without an outputSchema: %s", tool, it.JSON)
				}
			}
			saveLock(t, lockPath, map[string]*lock.Entry{c.name: entry})
			calls := []*sdk.CallToolParams{
				{Name: "add_note", Arguments: map[string]any{"title": "groceries", "body": "milk, eggs"}},
				{Name: "add_note", Arguments: map[string]any{"title": "garden", "body": "water the eggplants"}},
				{Name: "search_notes", Arguments: map[string]any{"query": "eggs"}},
				{Name: "search_notes", Arguments: map[string]any{"query": "nothing like it"}},
			}
			run := func(cmd *exec.Cmd) []*sdk.CallToolResult {
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				var stderr strings.Builder
				cmd.Stderr = &stderr
				client := sdk.NewClient(&sdk.Implementation{Name: "interop", Version: "1"}, nil)
				cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, &sdk.ClientSessionOptions{ProtocolVersion: c.version})
				if err != nil {
					t.Fatalf("%v\nstderr:\n%s", err, stderr.String())
				}
				defer cs.Close()
				var out []*sdk.CallToolResult
				for _, p := range calls {
					res, err := cs.CallTool(ctx, p)
					if err != nil {
						t.Fatalf("%s: %v\nstderr:\n%s", p.Name, err, stderr.String())
					}
					out = append(out, res)
				}
				return out
			}
			direct := run(exec.Command(notes))
			through := run(exec.Command(mcpform, "run", "-lock", lockPath, "-audit", auditPath, c.name))
			for i, p := range calls {
				d, th := normalized(t, direct[i]), normalized(t, through[i])
				if !reflect.DeepEqual(d, th) {
					t.Errorf("%s: through mcpform %s; direct %s", p.Name, th, d)
				}
				if through[i].IsError || through[i].StructuredContent == nil {
					t.Errorf("%s: a tool error or no structuredContent through mcpform: %s", p.Name, th)
				}
			}
			data, err := os.ReadFile(auditPath)
			if err != nil {
				t.Fatal(err)
			}
			ok := 0
			for _, l := range strings.Split(string(data), "\n") {
				var r struct{ Event, Method, Outcome string }
				if json.Unmarshal([]byte(l), &r) != nil || r.Event != "result" || r.Method != "tools/call" {
					continue
				}
				if r.Outcome != "ok" {
					t.Errorf("audit: a call's outcome is %q: %s", r.Outcome, l)
				}
				ok++
			}
			if ok != len(calls) {
				t.Errorf("audit: %d ok outcomes for %d calls:\n%s", ok, len(calls), data)
			}
		})
	}
}

// normalized is a call result as JSON without its _meta (the era's
// envelope), for comparing a direct result with one through mcpform.
func normalized(t *testing.T, r *sdk.CallToolResult) string {
	t.Helper()
	c := *r
	c.Meta = nil
	b, err := json.Marshal(&c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
