package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseClientConfigFlags(t *testing.T) {
	f, err := parseClientConfigFlags([]string{"-client", "vscode", "-lock", "x.lock", "-write", "-file", "f.json", "-mcpform", "/bin/m", "a", "b"}, new(bytes.Buffer))
	if err != nil {
		t.Fatal(err)
	}
	want := clientConfigFlags{client: "vscode", lock: "x.lock", write: true, file: "f.json", mcpform: "/bin/m", names: []string{"a", "b"}}
	if diff := cmp.Diff(want, *f, cmp.AllowUnexported(clientConfigFlags{})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, args := range [][]string{{"-client", "emacs"}, {"-file", "x"}, {"-nope"}} {
		if _, err := parseClientConfigFlags(args, new(bytes.Buffer)); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}

// TestClientConfigWriteBackup checks what a script cannot: the backup holds
// the file exactly as it was, with its permissions.
func TestClientConfigWriteBackup(t *testing.T) {
	dir := t.TempDir()
	lockData, err := os.ReadFile("testdata/script/clientconfig_write.txtar")
	if err != nil {
		t.Fatal(err)
	}
	_, lockText, _ := strings.Cut(string(lockData), "-- mcp.lock --\n")
	lockPath := filepath.Join(dir, "mcp.lock")
	file := filepath.Join(dir, "claude_desktop_config.json")
	before := []byte("{\n  \"globalShortcut\": \"Ctrl+Space\",\n  \"mcpServers\": {\n    \"time\": {\"command\": \"uvx\", \"args\": [\"mcp-server-time\"]}\n  }\n}\n")
	if err := os.WriteFile(lockPath, []byte(lockText), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, before, 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	io := &stdio{in: strings.NewReader(""), out: &out, err: &errb, getenv: func(string) string { return "" }}
	code := runClientConfig(context.Background(), io, []string{"-write", "-file", file, "-lock", lockPath, "-mcpform", "/opt/mcpform", "time"})
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	backups, _ := filepath.Glob(file + ".bak-*")
	if len(backups) != 1 {
		t.Fatalf("backups: %v", backups)
	}
	got, _ := os.ReadFile(backups[0])
	if !bytes.Equal(got, before) {
		t.Errorf("backup differs from the original:\n%s", got)
	}
	if st, _ := os.Stat(backups[0]); st.Mode().Perm() != 0o600 {
		t.Errorf("backup mode %v, want 0600 like the original", st.Mode().Perm())
	}
	after, _ := os.ReadFile(file)
	if !strings.Contains(string(after), `"globalShortcut": "Ctrl+Space"`) || !strings.Contains(string(after), `"args": ["run", "-lock", "`+lockPath+`", "time"]`) {
		t.Errorf("merged file:\n%s", after)
	}
	if st, _ := os.Stat(file); st.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, want 0600 kept", st.Mode().Perm())
	}
	if !strings.Contains(out.String(), `-    "time": {"command": "uvx", "args": ["mcp-server-time"]}`) {
		t.Errorf("diff on stdout:\n%s", out.String())
	}
}
