package lang

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExamples parses and evaluates every example configuration, and checks
// that it is formatted, so that none can rot.
func TestExamples(t *testing.T) {
	var dirs []string
	err := filepath.WalkDir("../examples", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "servers" || d.Name() == "modules") {
			return filepath.SkipDir // example servers; modules are loaded through their callers
		}
		if !d.IsDir() && d.Name() == ConfigFile {
			dirs = append(dirs, filepath.Dir(p))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"quickstart", "sandboxed", "taint", "shared-module/team-a", "shared-module/team-b"} {
		found := false
		for _, d := range dirs {
			found = found || filepath.ToSlash(d) == "../examples/"+want
		}
		if !found {
			t.Errorf("example %s is missing", want)
		}
	}
	for _, dir := range dirs {
		t.Run(strings.TrimPrefix(filepath.ToSlash(dir), "../examples/"), func(t *testing.T) {
			cfg := mustLoad(t, dir, Options{Version: "0.1.0"})
			if len(cfg.Servers) == 0 {
				t.Error("the example declares no server")
			}
			for name, src := range cfg.Files {
				out, diags := Format(src, name)
				if diags.HasErrors() || string(out) != string(src) {
					t.Errorf("%s is not formatted; run mcpform fmt -recursive examples", name)
				}
			}
		})
	}
}

func TestQuickstart(t *testing.T) {
	cfg := mustLoad(t, "../examples/quickstart", Options{Version: "0.1.0"})
	if len(cfg.Servers) != 1 || cfg.Servers[0].Name != "notes" || strings.Join(cfg.Servers[0].Command, " ") != "go run ../servers/notes" {
		t.Errorf("quickstart servers = %+v; the README's first command relies on one server notes running go run ../servers/notes", cfg.Servers)
	}
}

// TestExampleFile evaluates mcp.hcl.example, with its git module standing in
// as if mcpform init had fetched it.
func TestExampleFile(t *testing.T) {
	src, err := os.ReadFile("../mcp.hcl.example")
	if err != nil {
		t.Fatal(err)
	}
	if out, diags := Format(src, "mcp.hcl.example"); diags.HasErrors() || string(out) != string(src) {
		t.Errorf("mcp.hcl.example is not formatted: %v", diags)
	}
	source := "git::https://github.com/acme/mcp-modules.git//github?ref=v1.2.0"
	dir := writeTree(t, t.TempDir(), map[string]string{
		"mcp.hcl": string(src),
		".mcpform/modules/modules.json": `{"modules": [{"key": "github", "source": "` + source + `", "ref": "v1.2.0",
			"commit": "0123456789abcdef0123456789abcdef01234567", "dir": ".mcpform/modules/github"}]}`,
		".mcpform/modules/github/github/mcp.hcl": `
variable "token_env" { type = string }
server "issues" {
  command = ["github-mcp-server", "stdio"]
  env     = [var.token_env]
}
`,
	})
	cfg := mustLoad(t, dir, Options{Version: "0.1.0"})
	var names []string
	for _, s := range cfg.Servers {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, " "); got != "fetch github.issues time" {
		t.Errorf("servers = %s", got)
	}
}
