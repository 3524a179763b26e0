package onboard

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestUnpassed: only the names that neither the client's start
// environment (PATH, HOME, …) nor the entry's env provides, per server, in
// the launches' order; an entry with an envFile may set anything.
func TestUnpassed(t *testing.T) {
	ls := Launches("/bin/mcpform", "/p/mcp.lock", []string{"github", "time", "notes", "fs"})
	need := map[string][]string{
		"github": {"GITHUB_TOKEN", "HOME", "PATH"},
		"time":   {"PATH", "TZ"},
		"notes":  {"NOTES_DIR", "USERPROFILE"},
		"fs":     {"HOME", "PATH", "SHELL", "TERM", "USER", "LOGNAME"},
	}
	file := []byte(`{"mcpServers": {
		// an entry that passes the token
		"github": {"command": "npx", "env": {"GITHUB_TOKEN": "kept"}},
		"time": {"command": "uvx", "envFile": ".env"},
		"notes": {"command": "notes", "env": {}},
	}}`)
	for _, tt := range []struct {
		name string
		c    Client
		data []byte
		want []EnvNeed
	}{
		{"a snippet has no env", ClaudeDesktop, nil, []EnvNeed{{"github", []string{"GITHUB_TOKEN"}}, {"time", []string{"TZ"}}, {"notes", []string{"NOTES_DIR"}}}},
		{"the entries' env and envFile", ClaudeCode, file, []EnvNeed{{"notes", []string{"NOTES_DIR"}}}},
		{"another client's key reads no entry", VSCode, file, []EnvNeed{{"github", []string{"GITHUB_TOKEN"}}, {"time", []string{"TZ"}}, {"notes", []string{"NOTES_DIR"}}}},
		{"an unreadable file", ClaudeDesktop, []byte("{"), []EnvNeed{{"github", []string{"GITHUB_TOKEN"}}, {"time", []string{"TZ"}}, {"notes", []string{"NOTES_DIR"}}}},
	} {
		if diff := cmp.Diff(tt.want, Unpassed(tt.c, tt.data, ls, need)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
	if got := Unpassed(ClaudeDesktop, nil, ls, map[string][]string{"fs": {"PATH", "HOME"}}); got != nil {
		t.Errorf("PATH and HOME reported: %v", got)
	}
}

func TestInheritsEnvironment(t *testing.T) {
	for c, want := range map[Client]bool{ClaudeDesktop: false, ClaudeCode: true, VSCode: true, Cursor: true} {
		if got := c.InheritsEnvironment(); got != want {
			t.Errorf("%s.InheritsEnvironment() = %v, want %v", c, got, want)
		}
	}
}
