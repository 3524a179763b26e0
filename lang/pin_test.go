package lang

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
)

func TestUnpinnedPackage(t *testing.T) {
	for _, tc := range []struct {
		argv   []string
		runner string // "" when not flagged
		fixed  string // hclList(Fixed)
		latest string
	}{
		{[]string{"npx", "-y", "@modelcontextprotocol/server-memory"}, "npx", `["npx", "-y", "@modelcontextprotocol/server-memory@VERSION"]`, "npm view @modelcontextprotocol/server-memory version"},
		{[]string{"npx", "-y", "@modelcontextprotocol/server-memory@2026.8.31"}, "", "", ""},
		{[]string{"npx", "pkg@latest"}, "npx", `["npx", "-y", "pkg@VERSION"]`, "npm view pkg version"},
		{[]string{"npx", "pkg@^1.2.0"}, "npx", `["npx", "-y", "pkg@VERSION"]`, "npm view pkg version"},
		{[]string{"npx", "-y", "pkg@next"}, "npx", `["npx", "-y", "pkg@VERSION"]`, "npm view pkg version"},
		{[]string{"npx", "-y", "pkg@1"}, "npx", `["npx", "-y", "pkg@VERSION"]`, "npm view pkg version"},
		{[]string{"npx", "-y", "pkg@1.2.3-beta.1"}, "", "", ""},
		{[]string{"npx", "--package", "pkg", "bin"}, "npx", `["npx", "-y", "--package", "pkg@VERSION", "bin"]`, "npm view pkg version"},
		{[]string{"npx", "--package=pkg@2.0.0", "bin"}, "", "", ""},
		{[]string{"npx", "-y", "./local"}, "", "", ""},
		{[]string{"npx", "-y", "github:owner/repo"}, "", "", ""},
		{[]string{"cmd", "/c", "npx", "-y", "pkg"}, "npx", `["cmd", "/c", "npx", "-y", "pkg@VERSION"]`, "npm view pkg version"},
		{[]string{`C:\nodejs\npx.cmd`, "pkg"}, "npx", `["C:\\nodejs\\npx.cmd", "-y", "pkg@VERSION"]`, "npm view pkg version"},
		{[]string{"npm", "exec", "--yes", "pkg@latest"}, "npm exec", `["npm", "exec", "--yes", "pkg@VERSION"]`, "npm view pkg version"},
		{[]string{"npm", "exec", "--package=pkg@1.0.0", "--", "bin"}, "", "", ""},
		{[]string{"npm", "exec", "-y", "pkg@1.0.0"}, "", "", ""},
		{[]string{"npm", "install", "pkg"}, "", "", ""},
		{[]string{"pnpm", "dlx", "@scope/pkg@latest"}, "pnpm dlx", `["pnpm", "dlx", "@scope/pkg@VERSION"]`, "npm view @scope/pkg version"},
		{[]string{"pnpm", "--silent", "dlx", "pkg@1.0.0"}, "", "", ""},
		{[]string{"pnpm", "install", "pkg"}, "", "", ""},
		{[]string{"pnpx", "pkg"}, "pnpx", `["pnpx", "pkg@VERSION"]`, "npm view pkg version"},
		{[]string{"bunx", "pkg"}, "bunx", `["bunx", "pkg@VERSION"]`, "npm view pkg version"},
		{[]string{"bunx", "--bun", "pkg@3.1.4"}, "", "", ""},
		{[]string{"uvx", "mcp-server-time"}, "uvx", `["uvx", "mcp-server-time==VERSION"]`, "uvx pip index versions mcp-server-time"},
		{[]string{"uvx", "mcp-server-time==2026.8.18"}, "", "", ""},
		{[]string{"uvx", "mcp-server-time@2026.8.18"}, "", "", ""},
		{[]string{"uvx", "mcp-server-time@latest"}, "uvx", `["uvx", "mcp-server-time==VERSION"]`, "uvx pip index versions mcp-server-time"},
		{[]string{"uvx", "--python", "3.12", "mcp-server-time"}, "uvx", `["uvx", "--python", "3.12", "mcp-server-time==VERSION"]`, "uvx pip index versions mcp-server-time"},
		{[]string{"uvx", "--from", "mcp-server-fetch>=2025.1", "mcp-server-fetch"}, "uvx", `["uvx", "--from", "mcp-server-fetch==VERSION", "mcp-server-fetch"]`, "uvx pip index versions mcp-server-fetch"},
		{[]string{"uvx", "--from=mcp-server-fetch", "mcp-server-fetch"}, "uvx", `["uvx", "--from=mcp-server-fetch==VERSION", "mcp-server-fetch"]`, "uvx pip index versions mcp-server-fetch"},
		{[]string{"uvx", "--from", "git+https://github.com/x/y", "y"}, "", "", ""},
		{[]string{"pipx", "run", "mcp-server-time"}, "pipx run", `["pipx", "run", "mcp-server-time==VERSION"]`, "uvx pip index versions mcp-server-time"},
		{[]string{"pipx", "run", "--spec", "mcp-server-git>=0.6", "mcp-server-git"}, "pipx run", `["pipx", "run", "--spec", "mcp-server-git==VERSION", "mcp-server-git"]`, "uvx pip index versions mcp-server-git"},
		{[]string{"pipx", "run", "mcp-server-time==2026.8.18"}, "", "", ""},
		{[]string{"pipx", "install", "mcp-server-time"}, "", "", ""},
		{[]string{"node", "index.js"}, "", "", ""},
		{nil, "", "", ""},
	} {
		u, ok := UnpinnedPackage(tc.argv)
		if ok != (tc.runner != "") {
			t.Errorf("UnpinnedPackage(%q) flagged = %v, want %v (%+v)", tc.argv, ok, !ok, u)
			continue
		}
		if !ok {
			continue
		}
		if u.Runner != tc.runner || hclList(u.Fixed) != tc.fixed || u.Latest != tc.latest {
			t.Errorf("UnpinnedPackage(%q) = %s, %s, %s\nwant %s, %s, %s", tc.argv, u.Runner, hclList(u.Fixed), u.Latest, tc.runner, tc.fixed, tc.latest)
		}
	}
}

// TestPinAndProgramWarnings checks validate's warnings, one per server:
// an unpinned package with its pinned form and how to find the version,
// and a command[0] not on PATH with what to install.
func TestPinAndProgramWarnings(t *testing.T) {
	bin := t.TempDir()
	for _, p := range []string{"npx", "node", "npm"} {
		if err := os.WriteFile(filepath.Join(bin, p), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir := writeTree(t, t.TempDir(), map[string]string{
		"mcp.hcl": `
server "filesystem" {
  command = ["npx", "-y", "@modelcontextprotocol/server-filesystem@latest", "/tmp"]
  env     = ["PATH", "HOME"]
}
server "fetch" {
  command = ["uvx", "mcp-server-fetch"]
  env     = ["PATH", "HOME"]
}
server "pinned" {
  command = ["npx", "-y", "@modelcontextprotocol/server-memory@2026.8.4"]
  env     = ["PATH", "HOME"]
}
server "tool" {
  command = ["my-server", "stdio"]
}
`,
	})
	cfg, diags := Load(dir, Options{LookPath: func(prog string) string { return LookPath(prog, bin) }})
	type warn struct{ Summary, Server, Detail string }
	var got []warn
	for _, d := range diags {
		if d.Severity != hcl.DiagWarning {
			t.Errorf("not a warning: %s: %s", d.Summary, d.Detail)
		}
		server, _, _ := strings.Cut(d.Detail, " ")
		got = append(got, warn{d.Summary, server, d.Detail})
	}
	want := []warn{
		{"Unpinned package", "server.filesystem", `server.filesystem runs the npx package "@modelcontextprotocol/server-filesystem@latest" without an exact version, so plan could lock one release and run start another. Pin it: command = ["npx", "-y", "@modelcontextprotocol/server-filesystem@VERSION", "/tmp"], with VERSION the release you reviewed (` + "`npm view @modelcontextprotocol/server-filesystem version`" + ` shows the latest).`},
		{"Unpinned package", "server.fetch", `server.fetch runs the uvx package "mcp-server-fetch" without an exact version, so plan could lock one release and run start another. Pin it: command = ["uvx", "mcp-server-fetch==VERSION"], with VERSION the release you reviewed (` + "`uvx pip index versions mcp-server-fetch`" + ` or https://pypi.org/project/mcp-server-fetch/ shows the releases).`},
		{"Program not found", "server.fetch", `server.fetch runs its package through uvx, which mcpform does not run: plan pins the package with its whole tree and probes it, and run starts it, with python3, and python3 is not on mcpform's PATH. To fix it, install Python (https://www.python.org/downloads/); or remove the server's block; or plan the others with -target.`},
		{"Program not found", "server.tool", `server.tool starts "my-server", which is not on mcpform's PATH, so the server would not start. To fix it, install it, or put the directory that holds it on PATH; or remove the server's block; or plan the others with -target.`},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if len(cfg.Servers) != 4 {
		t.Errorf("a warning must not drop a server: %d servers", len(cfg.Servers))
	}
	// npx itself is not needed, npm is: it pins the tree.
	if err := os.Remove(filepath.Join(bin, "npm")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(bin, "npx")); err != nil {
		t.Fatal(err)
	}
	_, diags = Load(dir, Options{LookPath: func(prog string) string { return LookPath(prog, bin) }})
	var npmMissing int
	for _, d := range diags {
		if d.Summary == "Program not found" && strings.Contains(d.Detail, "through npx, which mcpform does not run") {
			npmMissing++
			if !strings.Contains(d.Detail, "with node and npm, and npm is not on mcpform's PATH. To fix it, install Node.js, which provides npm") {
				t.Errorf("npm missing: %s", d.Detail)
			}
		}
	}
	if npmMissing != 2 {
		t.Errorf("%d npx servers warned that npm is missing, want 2: %v", npmMissing, diags)
	}
	// Without LookPath no program is looked for; pinning is still checked.
	if _, diags := Load(dir, Options{}); len(diags) != 2 {
		t.Errorf("without LookPath: %d diagnostics, want the 2 unpinned packages: %v", len(diags), diags)
	}
}
