package mcp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpform/mcpform/internal/fakemcp"
)

// TestMain re-executes the test binary as a fake server when asked to (no
// helper binary to build): MCPFORM_FAKEMCP=1 makes it fakemcp serving the
// spec file in its first argument.
func TestMain(m *testing.M) {
	if os.Getenv("MCPFORM_FAKEMCP") == "1" {
		fakemcp.Main()
	}
	code := m.Run()
	cleanupBuilds()
	os.Exit(code)
}

// fake returns a ServerSpec that starts the fake server with spec (a JSON
// value in fakemcp's file format). MCPFORM_FAKEMCP reaches it the way every
// variable must: named in Env.
func fake(t *testing.T, spec string) ServerSpec {
	t.Helper()
	if !json.Valid([]byte(spec)) {
		t.Fatalf("fake spec is not JSON: %s", spec)
	}
	path := filepath.Join(t.TempDir(), "fake.json")
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return ServerSpec{
		Name:    "fake",
		Command: []string{exe, path},
		Env:     []string{"MCPFORM_FAKEMCP"},
		LookupEnv: func(name string) (string, bool) {
			if name == "MCPFORM_FAKEMCP" {
				return "1", true
			}
			return "", false
		},
	}
}
