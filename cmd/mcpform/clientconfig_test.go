package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpform/mcpform/lock"
)

func TestParseClientConfigFlags(t *testing.T) {
	testParse(t, parseClientConfigFlags, []parseCase[clientConfigFlags]{
		{args: nil, want: clientConfigFlags{client: "claude", lock: "mcp.lock", names: []string{}}},
		{args: []string{"-client", "vscode", "-lock", "x.lock", "-write", "-file", "f.json", "-mcpform", "/bin/m", "a", "b"},
			want: clientConfigFlags{client: "vscode", lock: "x.lock", write: true, file: "f.json", mcpform: "/bin/m", names: []string{"a", "b"}}},
		{args: []string{"-client", "emacs"}, wantErr: true},
		{args: []string{"-file", "x"}, wantErr: true},
		{args: []string{"-nope"}, wantErr: true},
	})
}

// TestClientConfigWriteBackup checks what a script cannot: the backup holds
// the file exactly as it was, with its permissions, in mcpform's state
// directory (private), and nothing is left beside the file.
func TestClientConfigWriteBackup(t *testing.T) {
	dir, lockPath := clientConfigLock(t)
	file := filepath.Join(dir, "claude_desktop_config.json")
	before := []byte("{\n  \"globalShortcut\": \"Ctrl+Space\",\n  \"mcpServers\": {\n    \"time\": {\"command\": \"uvx\", \"args\": [\"mcp-server-time\"]}\n  }\n}\n")
	if err := os.WriteFile(file, before, 0o600); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state")
	out, errb := runClientConfigWrite(t, state, "-file", file, "-lock", lockPath, "time")
	if beside, _ := filepath.Glob(file + "*.bak*"); len(beside) != 0 {
		t.Errorf("a backup beside the file: %v", beside)
	}
	backupDir := filepath.Join(state, "mcpform", "backups")
	backups, _ := filepath.Glob(filepath.Join(backupDir, "*-claude_desktop_config.json.bak-*"))
	if len(backups) != 1 {
		t.Fatalf("backups: %v", backups)
	}
	if !strings.Contains(errb.String(), "Backup: "+backups[0]+"\n") {
		t.Errorf("the output does not name the backup %s:\n%s", backups[0], errb.String())
	}
	if st, err := os.Stat(backupDir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("backup directory: %v, %v; want 0700", st.Mode().Perm(), err)
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

// TestClientConfigWriteWindowsFile: a .vscode/mcp.json saved on Windows,
// with a UTF-8 BOM, CRLF line endings and a comment, is read and written
// back with all three kept and no line ending in LF alone; the lock under
// the workspace is written ${workspaceFolder}/mcp.lock.
func TestClientConfigWriteWindowsFile(t *testing.T) {
	dir, lockPath := clientConfigLock(t)
	file := filepath.Join(dir, ".vscode", "mcp.json")
	if err := os.Mkdir(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	before := "\xef\xbb\xbf{\r\n  // the team's servers\r\n  \"servers\": {\r\n    \"time\": {\"command\": \"uvx\", \"args\": [\"mcp-server-time\"]},\r\n  },\r\n}\r\n"
	if err := os.WriteFile(file, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ := runClientConfigWrite(t, filepath.Join(t.TempDir(), "state"), "-client", "vscode", "-file", file, "-lock", lockPath, "time")
	after, _ := os.ReadFile(file)
	want := "\xef\xbb\xbf{\r\n  // the team's servers\r\n  \"servers\": {\r\n    \"time\": {\r\n      \"type\": \"stdio\",\r\n      \"command\": \"/opt/mcpform\",\r\n      \"args\": [\"run\", \"-lock\", \"${workspaceFolder}/mcp.lock\", \"time\"]\r\n    },\r\n  },\r\n}\r\n"
	if diff := cmp.Diff(want, string(after)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if strings.ContainsAny(out.String(), "\r\ufeff") {
		t.Errorf("the diff shows a CR or the BOM:\n%q", out.String())
	}
	if !strings.Contains(out.String(), "+      \"args\": [\"run\", \"-lock\", \"${workspaceFolder}/mcp.lock\", \"time\"]\n") {
		t.Errorf("diff on stdout:\n%s", out.String())
	}
}

// clientConfigLock writes the lock of the clientconfig_write script into a
// new directory and returns both.
func clientConfigLock(t *testing.T) (dir, lockPath string) {
	t.Helper()
	dir = t.TempDir()
	data, err := os.ReadFile("testdata/script/clientconfig_write.txtar")
	if err != nil {
		t.Fatal(err)
	}
	_, lockText, _ := strings.Cut(string(data), "-- mcp.lock --\n")
	lockPath = filepath.Join(dir, "mcp.lock")
	if err := os.WriteFile(lockPath, []byte(lockText), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, lockPath
}

// runClientConfigWrite runs client-config -write with args, launching
// /opt/mcpform, with state as XDG_STATE_HOME; it must succeed.
func runClientConfigWrite(t *testing.T, state string, args ...string) (stdout, stderr *bytes.Buffer) {
	t.Helper()
	stdout, stderr = new(bytes.Buffer), new(bytes.Buffer)
	io := &stdio{in: strings.NewReader(""), out: stdout, err: stderr, getenv: func(k string) string {
		if k == "XDG_STATE_HOME" {
			return state
		}
		return ""
	}}
	args = append([]string{"client-config", "-write", "-mcpform", "/opt/mcpform"}, args...)
	if code := run(context.Background(), args, io); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	return stdout, stderr
}

// clientConfigRemoteLock is clientConfigLock's lock with the remote servers
// names added (url servers, locked with a bearer token).
func clientConfigRemoteLock(t *testing.T, names ...string) (dir, lockPath string) {
	t.Helper()
	dir, lockPath = clientConfigLock(t)
	f, err := lock.Load(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		e := &lock.Entry{
			Remote: &lock.Remote{
				URL:       "https://" + n + ".example.com/mcp",
				Transport: lock.TransportStreamableHTTP,
				Auth:      &lock.RemoteAuth{BearerEnv: "TRACKER_TOKEN"},
			},
			ProtocolVersion: "2025-11-25",
			ServerInfo:      json.RawMessage(`{"name":"fake","version":"1.0.0"}`),
			Capabilities:    json.RawMessage(`{"tools":{}}`),
		}
		if err := e.Seal(); err != nil {
			t.Fatal(err)
		}
		f.Servers[n] = e
	}
	data, err := lock.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lockPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, lockPath
}

// TestClientConfigRemote: mcpform run does not proxy remote servers yet
// (it refuses them), so client-config leaves them out of what it prints
// and writes, says so in one line, and leaves the client's own entry for
// one as it was, without calling it a bypass of mcpform.
func TestClientConfigRemote(t *testing.T) {
	_, lockPath := clientConfigRemoteLock(t, "tracker")
	const note = "Note: server \"tracker\" is remote: mcpform run does not proxy remote servers yet; keep your client's own entry for it.\n"

	// Printed: the local servers only.
	var out, errb bytes.Buffer
	io := &stdio{in: strings.NewReader(""), out: &out, err: &errb, getenv: func(string) string { return "" }}
	if code := run(context.Background(), []string{"client-config", "-client", "cursor", "-mcpform", "/opt/mcpform", "-lock", lockPath}, io); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if strings.Contains(out.String(), "tracker") {
		t.Errorf("the remote server is in the snippet:\n%s", out.String())
	}
	for _, n := range []string{"github", "team.notes", "time"} {
		if !strings.Contains(out.String(), `"args": ["run", "-lock", "`+lockPath+`", "`+n+`"]`) {
			t.Errorf("the snippet lacks %s:\n%s", n, out.String())
		}
	}
	if strings.Count(errb.String(), note) != 1 {
		t.Errorf("stderr lacks the note %q:\n%s", note, errb.String())
	}

	// Only the remote server selected: nothing to print.
	out.Reset()
	errb.Reset()
	if code := run(context.Background(), []string{"client-config", "-mcpform", "/opt/mcpform", "-lock", lockPath, "tracker"}, io); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if out.Len() != 0 {
		t.Errorf("stdout for a remote server alone:\n%s", out.String())
	}
	if want := note + "Nothing to write: every selected server is remote.\n"; errb.String() != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", errb.String(), want)
	}

	// Written: the client's own entry for the remote server stays as it
	// was, and is not reported as starting it past mcpform (sentry, in no
	// lock, is).
	dir := filepath.Dir(lockPath)
	file := filepath.Join(dir, ".cursor", "mcp.json")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	tracker := `"tracker": {"url": "https://tracker.example.com/mcp", "headers": {"Authorization": "Bearer ${env:TRACKER_TOKEN}"}}`
	before := "{\n  \"mcpServers\": {\n    " + tracker + ",\n    \"sentry\": {\"url\": \"https://mcp.sentry.dev/mcp\"}\n  }\n}\n"
	if err := os.WriteFile(file, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr := runClientConfigWrite(t, filepath.Join(dir, "state"), "-client", "cursor", "-file", file, "-lock", lockPath)
	after, _ := os.ReadFile(file)
	if !strings.Contains(string(after), "    "+tracker+",\n") {
		t.Errorf("the client's entry for the remote server changed:\n%s", after)
	}
	if strings.Contains(string(after), `"run", "-lock", "`+lockPath+`", "tracker"`) {
		t.Errorf("the remote server launches mcpform run:\n%s", after)
	}
	if strings.Count(stderr.String(), note) != 1 {
		t.Errorf("stderr lacks the note:\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "3 server(s) now launch mcpform run") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "Note: Cursor still starts sentry directly, past mcpform") || strings.Contains(stderr.String(), "starts sentry, tracker") || strings.Contains(stderr.String(), "tracker directly") {
		t.Errorf("stderr should name sentry alone as bypassing mcpform:\n%s", stderr.String())
	}

	// -write with only remote servers leaves the file alone.
	_, stderr = runClientConfigWrite(t, filepath.Join(dir, "state"), "-client", "cursor", "-file", file, "-lock", lockPath, "tracker")
	if again, _ := os.ReadFile(file); !bytes.Equal(again, after) {
		t.Errorf("the file changed:\n%s", again)
	}
	if want := note + "Nothing to write: every selected server is remote.\n"; stderr.String() != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr.String(), want)
	}
}

// TestClientConfigRemoteMany: several remote servers share the one line.
func TestClientConfigRemoteMany(t *testing.T) {
	_, lockPath := clientConfigRemoteLock(t, "linear", "tracker")
	var out, errb bytes.Buffer
	io := &stdio{in: strings.NewReader(""), out: &out, err: &errb, getenv: func(string) string { return "" }}
	if code := run(context.Background(), []string{"client-config", "-mcpform", "/opt/mcpform", "-lock", lockPath}, io); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	const note = "Note: servers \"linear\" and \"tracker\" are remote: mcpform run does not proxy remote servers yet; keep your client's own entries for them.\n"
	if strings.Count(errb.String(), "remote") != 2 || !strings.Contains(errb.String(), note) {
		t.Errorf("stderr:\n%s\nwant the line %q", errb.String(), note)
	}
}
