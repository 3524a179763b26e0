package lang

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
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

// TestExampleFile evaluates mcp.hcl.example as the file says to check it on
// a fresh clone: saved as mcp.hcl at the repository's root, with no network
// and no mcpform init (its module is a local directory under examples/), and
// as validate does, with the launcher checks on.
func TestExampleFile(t *testing.T) {
	src, err := os.ReadFile("../mcp.hcl.example")
	if err != nil {
		t.Fatal(err)
	}
	if out, diags := Format(src, "mcp.hcl.example"); diags.HasErrors() || string(out) != string(src) {
		t.Errorf("mcp.hcl.example is not formatted: %v", diags)
	}
	if !strings.Contains(string(src), "cp mcp.hcl.example mcp.hcl && mcpform validate") {
		t.Error("mcp.hcl.example no longer says how to check it")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, ConfigFile)); err == nil {
		t.Skip("the repository root has an mcp.hcl of its own")
	}
	fsys := exampleFS{root: root, src: src}
	for _, opts := range []Options{{Version: "0.1.0"}, {Version: "0.1.0", Validate: true}} {
		cfg, diags := load(fsys, root, opts)
		if len(diags) > 0 {
			var buf bytes.Buffer
			WriteDiagnostics(&buf, diags, cfg.Files, false, 0)
			t.Fatalf("mcp.hcl.example (Validate %v): unexpected diagnostics:\n%s", opts.Validate, buf.String())
		}
		var names []string
		for _, s := range cfg.Servers {
			names = append(names, s.Name)
		}
		if got := strings.Join(names, " "); got != "fetch github.issues time" {
			t.Errorf("servers = %s", got)
		}
	}
}

// exampleFS is the file system with mcp.hcl.example standing in as
// root/mcp.hcl.
type exampleFS struct {
	root string
	src  []byte
}

func (f exampleFS) ReadFile(name string) ([]byte, error) {
	if name == filepath.Join(f.root, ConfigFile) {
		return f.src, nil
	}
	return osFS{}.ReadFile(name)
}

func (f exampleFS) ReadDir(name string) ([]fs.DirEntry, error) {
	entries, err := osFS{}.ReadDir(name)
	if err != nil || name != f.root {
		return entries, err
	}
	mfs := fstest.MapFS{ConfigFile: {Data: f.src}}
	extra, err := mfs.ReadDir(".")
	return append(entries, extra...), err
}
