package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpform/mcpform/lock"
)

// TestEntryEscapes: show prints what the server sent (its name, version,
// instructions, item keys and descriptions) escaped, never raw.
func TestEntryEscapes(t *testing.T) {
	instr := "be helpful\x1b[2J\nsecond line"
	e := &lock.Entry{
		Command:         []string{"npx", "-y", "pkg with space", ""},
		EnvPassthrough:  []string{"HOME"},
		ProtocolVersion: "2025-11-25",
		ServerInfo:      json.RawMessage(`{"name":"evil\u202e","version":"1.0"}`),
		Instructions:    &instr,
		Tools: []lock.Item{
			{Key: "rm\u200b", JSON: json.RawMessage(`{"name":"rm","description":"Deletes\u001b[31m files\nand more","annotations":{"destructiveHint":true,"openWorldHint":true}}`)},
		},
	}
	e.Digests.Surface = "sha256:00"
	var b bytes.Buffer
	Entry(&b, "fs", e)
	want := `server "fs"
  command      npx -y "pkg with space" ""
  env          HOME
  server       evil\u202e 1.0
  protocol     2025-11-25, era legacy (initialize)
  surface      sha256:00
  instructions be helpful\u001b[2J …
  tools (1)
    rm\u200b [destructive, open-world]  Deletes\u001b[31m files …
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestVerify: the text report, its summary for each outcome, and the JSON
// form, with an item key the server chose escaped in the text.
func TestVerify(t *testing.T) {
	inSync := VerifyServer{Name: "a", Status: InSync, Drift: DriftOf([]lock.Drift{{Class: lock.Informational, Field: "serverInfo", Action: '~'}})}
	drift := VerifyServer{Name: "b", Status: Drift, Drift: DriftOf([]lock.Drift{{Class: lock.Definitional, Field: "resourceTemplates", Kind: lock.ResourceTemplates, Key: "file:///{x}\x1b", Action: '+'}}),
		Findings: []VerifyFinding{{Address: "server.b.resource_template.file:///{x}\x1b", Action: "create", Rule: "MCP-RESOURCE-TEMPLATE-ADDED", Grade: "minor", Class: "definitional",
			Item: "server.b.resource_template.file:///{x}\x1b"}},
		RequiredBump: "minor", LockedVersion: "1.2.0", SuggestedVersion: "1.3.0"}
	failed := VerifyServer{Name: "c", Status: Failed, Drift: []VerifyDrift{}, Error: "server \"c\" did not start: exit 1\nstderr: boom", DidNotStart: true}
	for _, tc := range []struct {
		servers []VerifyServer
		want    string
	}{
		{[]VerifyServer{inSync}, "a: in sync (informational drift only)\n  ~ serverInfo                               (informational)\n\nVerify passed: mcp.lock matches 1 server.\n"},
		{[]VerifyServer{inSync, drift}, "a: in sync (informational drift only)\n  ~ serverInfo                               (informational)\n" +
			"b: drift\n  + resource template file:///{x}\\u001b      (definitional)\n      MCP-RESOURCE-TEMPLATE-ADDED (minor)\n  required bump: minor (locked version 1.2.0: suggested 1.3.0)\n\n" +
			"Verify failed: 1 of 2 servers drifted from the lock. Run mcpform plan to review the changes.\n"},
		{[]VerifyServer{drift, failed}, "b: drift\n  + resource template file:///{x}\\u001b      (definitional)\n      MCP-RESOURCE-TEMPLATE-ADDED (minor)\n  required bump: minor (locked version 1.2.0: suggested 1.3.0)\n" +
			"c: did not start\n    server \"c\" did not start: exit 1\n    stderr: boom\n\n" +
			"Verify failed: 1 of 2 servers could not be probed and 1 drifted.\n"},
	} {
		var b bytes.Buffer
		Verify(&b, VerifyReport{Servers: tc.servers})
		if diff := cmp.Diff(tc.want, b.String()); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	}
	var b bytes.Buffer
	if err := VerifyJSON(&b, VerifyReport{FormatVersion: VerifyFormatVersion, Lock: "mcp.lock", Servers: []VerifyServer{drift, failed}, ExitCode: 3}); err != nil {
		t.Fatal(err)
	}
	want := `{
  "format_version": "1.1",
  "lock": "mcp.lock",
  "servers": [
    {
      "name": "b",
      "status": "drift",
      "drift": [
        {
          "class": "definitional",
          "action": "+",
          "field": "resourceTemplates",
          "key": "file:///{x}\u001b"
        }
      ],
      "findings": [
        {
          "address": "server.b.resource_template.file:///{x}\u001b",
          "action": "create",
          "rule": "MCP-RESOURCE-TEMPLATE-ADDED",
          "grade": "minor",
          "class": "definitional",
          "security_relevant": false,
          "item": "server.b.resource_template.file:///{x}\u001b"
        }
      ],
      "required_bump": "minor",
      "locked_version": "1.2.0",
      "suggested_version": "1.3.0"
    },
    {
      "name": "c",
      "status": "error",
      "drift": [],
      "findings": [],
      "error": "server \"c\" did not start: exit 1\nstderr: boom"
    }
  ],
  "exit_code": 3
}
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("JSON (-want +got):\n%s", diff)
	}
	if strings.Contains(b.String(), "did_not_start") || strings.Contains(b.String(), "DidNotStart") {
		t.Error("the JSON form has DidNotStart: the error says it")
	}
}

// An OAuth server's entry shows the scopes it asked for (or that it took
// the server's default) and the authorization servers the lock pins,
// escaped: they are the server's word.
func TestEntryOAuth(t *testing.T) {
	e := &lock.Entry{ProtocolVersion: "2025-11-25", ServerInfo: json.RawMessage(`{"name":"gh","version":"1"}`),
		Remote: &lock.Remote{URL: "https://mcp.example.com/mcp", Transport: lock.TransportStreamableHTTP,
			Auth: &lock.RemoteAuth{OAuth: true, Resource: "https://mcp.example.com/mcp", Issuers: []string{"https://auth.example.com", "https://evil\u202e.example"}}}}
	var b bytes.Buffer
	Entry(&b, "gh", e)
	for _, want := range []string{
		"  auth         oauth, the server's default scopes\n",
		`  issuers      https://auth.example.com, https://evil\u202e.example (resource https://mcp.example.com/mcp)` + "\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("show lacks %q:\n%s", want, b.String())
		}
	}
	e.Remote.Auth.Scopes = []string{"repo:read"}
	b.Reset()
	Entry(&b, "gh", e)
	if !strings.Contains(b.String(), "oauth, scopes repo:read\n") {
		t.Errorf("show lacks the scopes:\n%s", b.String())
	}
}
