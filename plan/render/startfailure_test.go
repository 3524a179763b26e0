package render

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/mcpform/mcpform/mcp"
	"github.com/mcpform/mcpform/plan"
)

// TestStartFailureIsNoNoChange: a plan whose only server did not start
// (nothing else changed) never says "No changes", in any format; the human
// plan shows the failure with the server and lists it as an error.
func TestStartFailureIsNoNoChange(t *testing.T) {
	se := &mcp.StartError{Server: "fs", Stage: "initialize", Err: context.DeadlineExceeded,
		Stderr: "npm warn exec\x1b[2J\n", Env: []string{"HOME"}, Unset: []string{"GITHUB_TOKEN"}, Command: []string{"npx", "-y", "x"}}
	pe := &mcp.ProbeError{Server: "fs", Stage: "initialize", Err: se, Stderr: se.Stderr}
	p := &plan.Plan{FormatVersion: plan.FormatVersion, Servers: []*plan.ServerPlan{
		{Name: "fs", Addr: "server.fs", Action: plan.NoOp, Error: pe.Error()},
		{Name: "ok", Addr: "server.ok", Action: plan.NoOp},
	}}
	var human, md, js bytes.Buffer
	if err := Human(&human, p, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, p); err != nil {
		t.Fatal(err)
	}
	if err := JSON(&js, p); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"human": human.String(), "markdown": md.String(), "json": js.String()} {
		if strings.Contains(out, "No changes") {
			t.Errorf("%s says No changes:\n%s", name, out)
		}
		if !strings.Contains(out, "did not start") {
			t.Errorf("%s does not say the server did not start:\n%s", name, out)
		}
		if strings.ContainsRune(out, '\x1b') {
			t.Errorf("%s holds a raw escape: %q", name, out)
		}
	}
	h := human.String()
	for _, want := range []string{
		"# server.fs could not be probed; its lock entry is kept:",
		"the server did not start: it did not answer initialize in time",
		"environment it got (names only): HOME",
		"so not passed: GITHUB_TOKEN",
		`hint: PATH is not passed: add "PATH" to env`,
		`| npm warn exec\u001b[2J`,
		"\nError: server.fs: probing server \"fs\": initialize: the server did not start",
	} {
		if !strings.Contains(h, want) {
			t.Errorf("human plan lacks %q:\n%s", want, h)
		}
	}
}
