package runtime

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpform/mcpform/internal/npmtest"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/mcp"
	"github.com/mcpform/mcpform/policy"
	"github.com/mcpform/mcpform/runtime/taint"
)

// taintWrapper stands in for a client that launched two servers: both runs
// are children of this shell, so they share a taint session. The first
// reads a resource (a source under the test's policy); the second, not
// exec'd so that its parent stays this shell, serves the inspector.
const taintWrapper = `#!/bin/sh
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"w","version":"1"}}}' \
  '{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"demo://resource/static/document/features.md"}}' |
  "$MCPFORM" run -lock "$LOCK" -audit "$AUDIT" everything >/dev/null 2>&1
"$MCPFORM" run -lock "$LOCK" -audit "$AUDIT" everything
`

// TestTaintInspector shows the gate to a real client, the inspector CLI,
// in both eras. The CLI declares no elicitation capability and starts one
// server per invocation, so what it can show is: a source result taints the
// session of the client that read it, a sink call in a tainted session is
// refused as a tool error saying how to reset, and a fresh client is clean.
// The approval round trips are in cmd/mcpform's TestTaint* tests.
func TestTaintInspector(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the inspector and server-everything")
	}
	inspector := npmtest.Bin(t, "mcp-inspector")
	everything := npmtest.Bin(t, "mcp-server-everything")
	mcpform, _ := built(t)
	dir := t.TempDir()
	lockPath := filepath.Join(dir, "mcp.lock")
	lockServer(t, lockPath, "everything", []string{everything, "stdio"}, []string{"PATH"}, mcp.EraLegacy)
	lf, err := lock.Load(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	lf.Servers["everything"].Policy = &policy.Policy{Taint: &policy.Taint{Sources: []string{policy.AllResources}, Sinks: []string{"echo"}}}
	if err := lock.Save(lockPath, lf); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state")
	audit := filepath.Join(dir, "audit.jsonl")
	wrapper := filepath.Join(dir, "client.sh")
	script := strings.NewReplacer(`"$MCPFORM"`, shellQuote(mcpform), `"$LOCK"`, shellQuote(lockPath), `"$AUDIT"`, shellQuote(audit)).Replace(taintWrapper)
	if err := os.WriteFile(wrapper, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	// The inspector passes a server only a default environment, so the
	// state directory is passed explicitly.
	inspect := func(era string, target []string, args ...string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		all := append([]string{"--cli", "-e", "XDG_STATE_HOME=" + state, "--protocol-era", era}, target...)
		out, _ := exec.CommandContext(ctx, inspector, append(all, args...)...).CombinedOutput()
		return string(out)
	}
	direct := []string{mcpform, "run", "-lock", lockPath, "-audit", audit, "everything"}
	echo := []string{"--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hi"}
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			if out := inspect(era, direct, echo...); !strings.Contains(out, "Echo: hi") {
				t.Errorf("a fresh client's sink call was not forwarded:\n%.2000s", out)
			}
			out := inspect(era, direct, "--method", "resources/read", "--uri", "demo://resource/static/document/features.md")
			if !strings.Contains(out, "Everything Server - Features") {
				t.Errorf("resources/read:\n%.2000s", out)
			}
			out = inspect(era, []string{wrapper}, echo...)
			for _, want := range []string{`"isError": true`, "did not declare the elicitation capability", "mcpform taint reset u"} {
				if !strings.Contains(out, want) {
					t.Errorf("a sink call in a tainted session: no %q in:\n%.2000s", want, out)
				}
			}
		})
	}
	s, err := taint.Open(filepath.Join(state, "mcpform", "taint"))
	if err != nil {
		t.Fatal(err)
	}
	states, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	// Two direct reads and two wrapper reads, each its own client process.
	if len(states) != 4 {
		t.Errorf("%d tainted sessions, want 4", len(states))
	}
	for _, st := range states {
		if ev, ok := st.First(); !ok || ev.Item != "demo://resource/static/document/features.md" {
			t.Errorf("session %s: %+v", st.Session, st.Events)
		}
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
