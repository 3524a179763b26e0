package lang

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
)

func TestEnvShebang(t *testing.T) {
	for _, c := range []struct {
		head string
		want string
		ok   bool
	}{
		{"#!/usr/bin/env node\nrequire('x')\n", "node", true},
		{"#!/usr/bin/env node\r\n", "node", true},
		{"#! /usr/bin/env python3 -u\n", "python3", true},
		{"#!/usr/bin/env -S node --no-warnings\n", "node", true},
		{"#!/bin/env -i LANG=C bash\n", "bash", true},
		{"#!/usr/bin/python3\n", "", false},
		{"#!/bin/sh\n", "", false},
		{"#!/usr/bin/env\n", "", false},
		{"\x7fELF\x02\x01", "", false},
		{"", "", false},
	} {
		got, ok := envShebang([]byte(c.head))
		if got != c.want || ok != c.ok {
			t.Errorf("envShebang(%q) = %q, %v; want %q, %v", c.head, got, ok, c.want, c.ok)
		}
	}
}

func TestLauncherOf(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want string // "" for none
	}{
		{[]string{"npx", "-y", "pkg@1.0.0"}, "npx"},
		{[]string{`C:\Program Files\nodejs\npx.cmd`, "pkg"}, "npx"},
		{[]string{"cmd", "/c", "npx", "pkg"}, "npx"},
		{[]string{"npm", "exec", "pkg"}, "npm exec"},
		{[]string{"npm", "x", "pkg"}, "npm x"},
		{[]string{"npm", "start"}, ""},
		{[]string{"pnpm", "dlx", "pkg"}, "pnpm dlx"},
		{[]string{"pnpx", "pkg"}, "pnpx"},
		{[]string{"yarn", "dlx", "pkg"}, "yarn dlx"},
		{[]string{"bunx", "pkg"}, "bunx"},
		{[]string{"bun", "x", "pkg"}, "bun x"},
		{[]string{"uvx", "pkg==1"}, "uvx"},
		{[]string{"uv", "tool", "run", "pkg"}, "uv tool"},
		{[]string{"uv", "run", "server.py"}, "uv run"},
		{[]string{"pipx", "run", "pkg"}, "pipx run"},
		{[]string{"pipx", "install", "pkg"}, ""},
		{[]string{"node", "server.js"}, ""},
		{[]string{"github-mcp-server", "stdio"}, ""},
		{[]string{"/opt/bin/server"}, ""},
	} {
		l, ok := LauncherOf(c.argv, nil)
		if got := l.Name; got != c.want || ok != (c.want != "") {
			t.Errorf("LauncherOf(%q) = %q, %v; want %q", c.argv, got, ok, c.want)
		}
	}
}

// TestLauncherWarning checks the warning's exact text, that it goes away
// with PATH and HOME, and that #!/usr/bin/env scripts are found by path and,
// through Options.LookPath, by a bare name. A pinned runner (npx) draws
// none: mcpform starts its package with node, not the runner.
func TestLauncherWarning(t *testing.T) {
	bin := t.TempDir()
	script := "#!/usr/bin/env node\nconsole.log('hi')\n"
	for name, body := range map[string]string{"mcp-server-everything": script, "go-server": "\x7fELF\x02\x01\x01", "npx": script, "node": "\x7fELF\x02\x01\x01", "npm": script} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	lookPath := func(prog string) string { return LookPath(prog, bin) }

	dir := writeTree(t, t.TempDir(), map[string]string{
		"mcp.hcl": `
server "memory" {
  command = ["npx", "-y", "@modelcontextprotocol/server-memory@2026.8.4"]
  env     = ["MEMORY_FILE_PATH"]
}
server "everything" {
  command = ["mcp-server-everything", "stdio"]
}
server "local" {
  command = ["./bin/server.js"]
  env     = ["HOME"]
}
server "binary" {
  command = ["go-server"]
}
`,
		"bin/server.js": script,
	})
	cfg, diags := Load(dir, Options{LookPath: lookPath})
	type warn struct{ Summary, Detail, At string }
	var got []warn
	for _, d := range diags {
		if d.Severity != hcl.DiagWarning {
			t.Errorf("not a warning: %s: %s", d.Summary, d.Detail)
			continue
		}
		got = append(got, warn{d.Summary, d.Detail, filepath.Base(d.Subject.Filename) + ":" + strconv.Itoa(d.Subject.Start.Line)})
	}
	want := []warn{
		{
			"Launcher without PATH",
			`server.everything starts through a #!/usr/bin/env node script, which needs PATH to find node, but a server gets only the environment variables its env lists, so it would fail to start. Add PATH to env: env = ["PATH"] (names only: the values are read when the server starts).`,
			"mcp.hcl:7",
		},
		{
			"Launcher without PATH",
			`server.local starts through a #!/usr/bin/env node script, which needs PATH to find node, but a server gets only the environment variables its env lists, so it would fail to start. Add PATH to env: env = ["HOME", "PATH"] (names only: the values are read when the server starts).`,
			"mcp.hcl:11",
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if len(cfg.Servers) != 4 {
		t.Errorf("a warning must not drop a server: %d servers", len(cfg.Servers))
	}

	// Without LookPath a bare name is not looked at; paths still are.
	_, diags = Load(dir, Options{})
	if len(diags) != 1 {
		t.Errorf("without LookPath: %d diagnostics, want 1 (the script by path): %v", len(diags), diags)
	}

	fixed := writeTree(t, t.TempDir(), map[string]string{
		"mcp.hcl": `
server "memory" {
  command = ["npx", "-y", "@modelcontextprotocol/server-memory@2026.8.4"]
  env     = ["MEMORY_FILE_PATH", "PATH", "HOME"]
}
server "everything" {
  command = ["mcp-server-everything", "stdio"]
  env     = ["PATH"]
}
`,
	})
	mustLoad(t, fixed, Options{LookPath: lookPath})
}
