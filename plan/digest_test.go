package plan

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/mcpform/mcpform/lang"
	"github.com/mcpform/mcpform/policy"
)

// ConfigDigest changes with every evaluated value of a server and with
// the lock path, and not with where the server's block stands.
func TestConfigDigest(t *testing.T) {
	base := func() *lang.Config {
		return &lang.Config{Lockfile: "mcp.lock", Servers: []*lang.Server{{
			Name: "time", Addr: "server.time", Command: []string{"srv"}, Env: []string{"TZ"},
			Protocol: "auto", Timeout: 30 * time.Second, Version: "1.0.0",
			ToolVersions: map[string]string{"now": "1.0.0"}, ClientCapabilities: json.RawMessage(`{}`),
		}}}
	}
	want := ConfigDigest(base())
	moved := base()
	moved.Servers[0].DeclRange = hcl.Range{Filename: "other.hcl", Start: hcl.Pos{Line: 9}}
	if got := ConfigDigest(moved); got != want {
		t.Errorf("moving the server block changed the digest: %s, want %s", got, want)
	}
	for name, change := range map[string]func(*lang.Config){
		"lockfile":     func(c *lang.Config) { c.Lockfile = "other.lock" },
		"name":         func(c *lang.Config) { c.Servers[0].Name = "clock" },
		"addr":         func(c *lang.Config) { c.Servers[0].Addr = "server.clock" },
		"command":      func(c *lang.Config) { c.Servers[0].Command = []string{"srv", "-v"} },
		"env":          func(c *lang.Config) { c.Servers[0].Env = nil },
		"protocol":     func(c *lang.Config) { c.Servers[0].Protocol = "legacy" },
		"timeout":      func(c *lang.Config) { c.Servers[0].Timeout = time.Minute },
		"version":      func(c *lang.Config) { c.Servers[0].Version = "1.0.1" },
		"toolversions": func(c *lang.Config) { c.Servers[0].ToolVersions = nil },
		"capabilities": func(c *lang.Config) { c.Servers[0].ClientCapabilities = json.RawMessage(`{"roots":{}}`) },
		"policy":       func(c *lang.Config) { c.Servers[0].Policy.Sandbox = &policy.Sandbox{} },
	} {
		c := base()
		change(c)
		if ConfigDigest(c) == want {
			t.Errorf("changing %s left the digest as it was", name)
		}
	}
}
