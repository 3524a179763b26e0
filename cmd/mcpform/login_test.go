package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpform/mcpform/oauth"
)

// login and logout take a server of mcp.hcl that signs in with OAuth,
// and say what is wrong with any other; logout removes the stored login,
// and says so when there was none.
func TestLoginLogoutCLI(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	t.Setenv("XDG_STATE_HOME", state)
	hcl := `server "local" {
  command = ["fakemcp", "time.json"]
}

server "token" {
  url = "https://mcp.example.com/mcp"
  auth {
    bearer_env = "TOKEN"
  }
}

server "gh" {
  url = "https://mcp.example.com/gh"
  auth {
    oauth = true
  }
}
`
	if err := os.WriteFile(filepath.Join(dir, "mcp.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"login", "nosuch"}, `mcp.hcl declares no server "nosuch"`},
		{[]string{"login", "local"}, "local does not sign in with OAuth"},
		{[]string{"logout", "token"}, "token does not sign in with OAuth"},
		{[]string{"login"}, "mcpform login takes one argument"},
	} {
		cmd := exec.Command("mcpform", c.args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.want) {
			t.Errorf("mcpform %s: %v\n%s\nwant an error saying %q", strings.Join(c.args, " "), err, out, c.want)
		}
	}
	if out := mcpformIn(t, dir, 0, "logout", "gh"); !strings.Contains(string(out), "holds no login for gh") {
		t.Errorf("logout without a login: %s", out)
	}
	store := oauth.Store{Dir: filepath.Join(state, "mcpform", "oauth")}
	if err := store.Save(&oauth.Record{URL: "https://mcp.example.com/gh", Token: oauth.Token{AccessToken: "at"}}); err != nil {
		t.Fatal(err)
	}
	if out := mcpformIn(t, dir, 0, "logout", "gh"); !strings.Contains(string(out), "Logged out of gh") {
		t.Errorf("logout: %s", out)
	}
	if _, err := store.Load("https://mcp.example.com/gh"); err != oauth.ErrNoLogin {
		t.Errorf("after logout the login is still there: %v", err)
	}
}
