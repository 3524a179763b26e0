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

// clientConfigRemoteLock is clientConfigLock's lock with remote servers
// added: url servers, by name, each locked with the bearer token variable
// remotes gives it ("": no auth).
func clientConfigRemoteLock(t *testing.T, remotes map[string]string) (dir, lockPath string) {
	t.Helper()
	dir, lockPath = clientConfigLock(t)
	f, err := lock.Load(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	for n, bearer := range remotes {
		e := &lock.Entry{
			Remote: &lock.Remote{
				URL:       "https://" + n + ".example.com/mcp",
				Transport: lock.TransportStreamableHTTP,
			},
			ProtocolVersion: "2025-11-25",
			ServerInfo:      json.RawMessage(`{"name":"fake","version":"1.0.0"}`),
			Capabilities:    json.RawMessage(`{"tools":{}}`),
		}
		if bearer != "" {
			e.Remote.Auth = &lock.RemoteAuth{BearerEnv: bearer}
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

// TestClientConfigRemote: mcpform run proxies a remote server, so
// client-config points the client at mcpform run for it as for a local
// one, printed and written; -write replaces the client's own entry for it
// (its url and its headers: the token is mcpform's now, read from
// mcpform's environment), and the variable holding the bearer token is one
// the client must pass mcpform, like the lock's envPassthrough.
func TestClientConfigRemote(t *testing.T) {
	_, lockPath := clientConfigRemoteLock(t, map[string]string{"tracker": "TRACKER_TOKEN"})
	launch := func(n string) string { return `"args": ["run", "-lock", "` + lockPath + `", "` + n + `"]` }

	// Printed: every server, the remote one too, and Claude Desktop (which
	// passes only its start environment and the entry's env) told to pass
	// the token variable.
	var out, errb bytes.Buffer
	io := &stdio{in: strings.NewReader(""), out: &out, err: &errb, getenv: func(string) string { return "" }}
	if code := run(context.Background(), []string{"client-config", "-client", "claude", "-mcpform", "/opt/mcpform", "-lock", lockPath}, io); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, n := range []string{"github", "team.notes", "time", "tracker"} {
		if !strings.Contains(out.String(), launch(n)) {
			t.Errorf("the snippet lacks %s:\n%s", n, out.String())
		}
	}
	if strings.Contains(out.String(), "tracker.example.com") {
		t.Errorf("the snippet has the remote server's url, not mcpform run:\n%s", out.String())
	}
	if strings.Contains(errb.String(), "remote") {
		t.Errorf("stderr sets the remote server apart:\n%s", errb.String())
	}
	const envNote = "Note: Claude Desktop must pass mcpform GITHUB_PERSONAL_ACCESS_TOKEN for github and TRACKER_TOKEN for tracker: add them to the entries' env.\n"
	if !strings.Contains(errb.String(), envNote) {
		t.Errorf("stderr lacks %q:\n%s", envNote, errb.String())
	}

	// Only the remote server selected: its launch alone.
	out.Reset()
	errb.Reset()
	if code := run(context.Background(), []string{"client-config", "-client", "claude", "-mcpform", "/opt/mcpform", "-lock", lockPath, "tracker"}, io); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	want := "{\n  \"mcpServers\": {\n    \"tracker\": {\n      \"command\": \"/opt/mcpform\",\n      " + launch("tracker") + "\n    }\n  }\n}\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("snippet (-want +got):\n%s", diff)
	}
	if want := "Note: Claude Desktop must pass mcpform TRACKER_TOKEN for tracker: add it to the entry's env.\n"; errb.String() != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", errb.String(), want)
	}

	// Written: the client's own entry for the remote server now launches
	// mcpform run and is not reported as starting it past mcpform (sentry,
	// in no lock, is); Cursor does not pass TRACKER_TOKEN from the entry.
	// The lock is in the workspace: ${workspaceFolder}/mcp.lock.
	written := func(n string) string { return `"args": ["run", "-lock", "${workspaceFolder}/mcp.lock", "` + n + `"]` }
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
	if strings.Contains(string(after), "tracker.example.com") || strings.Contains(string(after), "Bearer") {
		t.Errorf("the client's own entry for the remote server stayed:\n%s", after)
	}
	for _, n := range []string{"github", "team.notes", "time", "tracker"} {
		if !strings.Contains(string(after), written(n)) {
			t.Errorf("%s does not launch mcpform run:\n%s", n, after)
		}
	}
	if !strings.Contains(string(after), `"sentry": {"url": "https://mcp.sentry.dev/mcp"}`) {
		t.Errorf("sentry changed:\n%s", after)
	}
	if !strings.Contains(stderr.String(), "4 server(s) now launch mcpform run") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "Note: Cursor still starts sentry directly, past mcpform: remove it from ") {
		t.Errorf("stderr should name sentry alone as bypassing mcpform:\n%s", stderr.String())
	}
	const cursorNote = "Note: Cursor must pass mcpform GITHUB_PERSONAL_ACCESS_TOKEN for github and TRACKER_TOKEN for tracker: add them to the entries' env, or set them where Cursor starts.\n"
	if !strings.Contains(stderr.String(), cursorNote) {
		t.Errorf("stderr lacks %q:\n%s", cursorNote, stderr.String())
	}
	if strings.Contains(stderr.String(), "remote") {
		t.Errorf("stderr sets the remote server apart:\n%s", stderr.String())
	}

	// An entry whose env hands mcpform the token needs no note, and keeps
	// that env.
	withEnv := "{\n  \"mcpServers\": {\n    \"tracker\": {\"url\": \"https://tracker.example.com/mcp\", \"env\": {\"TRACKER_TOKEN\": \"${env:TRACKER_TOKEN}\"}}\n  }\n}\n"
	if err := os.WriteFile(file, []byte(withEnv), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr = runClientConfigWrite(t, filepath.Join(dir, "state"), "-client", "cursor", "-file", file, "-lock", lockPath, "tracker")
	after, _ = os.ReadFile(file)
	if !strings.Contains(string(after), written("tracker")) || !strings.Contains(string(after), `"TRACKER_TOKEN": "${env:TRACKER_TOKEN}"`) || strings.Contains(string(after), "tracker.example.com") {
		t.Errorf("merged file:\n%s", after)
	}
	if strings.Contains(stderr.String(), "must pass") || strings.Contains(stderr.String(), "past mcpform") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
}

// TestClientConfigRemoteMany: several remote servers are launched like the
// local ones; each bearer token variable is needed from the client, a
// server locked without auth needs none.
func TestClientConfigRemoteMany(t *testing.T) {
	_, lockPath := clientConfigRemoteLock(t, map[string]string{"linear": "LINEAR_TOKEN", "public": "", "tracker": "TRACKER_TOKEN"})
	var out, errb bytes.Buffer
	io := &stdio{in: strings.NewReader(""), out: &out, err: &errb, getenv: func(string) string { return "" }}
	if code := run(context.Background(), []string{"client-config", "-client", "claude", "-mcpform", "/opt/mcpform", "-lock", lockPath, "linear", "public", "tracker"}, io); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, n := range []string{"linear", "public", "tracker"} {
		if !strings.Contains(out.String(), `"args": ["run", "-lock", "`+lockPath+`", "`+n+`"]`) {
			t.Errorf("the snippet lacks %s:\n%s", n, out.String())
		}
	}
	const want = "Note: Claude Desktop must pass mcpform LINEAR_TOKEN for linear and TRACKER_TOKEN for tracker: add them to the entries' env.\n"
	if errb.String() != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", errb.String(), want)
	}
}
