package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// configDigestLine is the line apply writes for an entry's
// mcpform.configDigest.
var configDigestLine = regexp.MustCompile(`(?m)^[ \t]*"configDigest": "sha256:[0-9a-f]{64}",?\n`)

// TestConfigDigestCLI: the lock's configDigest, through the commands.
// A policy edited by hand in mcp.lock fails verify with exit 2 (the lock
// is tampered) before anything is probed, and plan, show and run refuse
// the lock too. A lock without configDigest (another writer's, an older
// mcpform's) verifies and shows with a note on stderr; plan shows no
// change of a server, notes that apply adds the digests and has changes
// (-detailed-exitcode 2); apply writes them, and the lock is then the one
// apply writes from scratch.
func TestConfigDigestCLI(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, schemaFixture)
	mcpformIn(t, dir, 0, "apply", "-auto-approve")
	lockPath := filepath.Join(dir, "mcp.lock")
	applied, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(configDigestLine.FindAll(applied, -1)); n != 3 {
		t.Fatalf("apply wrote %d configDigests for 3 servers:\n%s", n, applied)
	}
	if _, stderr := mcpformOut(t, dir, 0, "verify"); strings.Contains(stderr, "Note:") {
		t.Errorf("verify of the lock apply wrote has notes:\n%s", stderr)
	}

	// The taint policy weakened by hand: resources no longer a source.
	edited := bytes.Replace(applied, []byte(`"resources:*"`), []byte(`"prompts:*"`), 1)
	if bytes.Equal(edited, applied) {
		t.Fatal("the lock has no taint source resources:* to edit")
	}
	writeFiles(t, dir, map[string]string{"mcp.lock": string(edited)})
	const refused = `mcp.lock: server "time": its command, environment, remote, policy or mcpform settings do not match mcpform.configDigest (recorded sha256:`
	const hint = "they were edited after the entry was locked. Restore the file from version control; to change them, change mcp.hcl and run mcpform plan and mcpform apply"
	stdout, stderr := mcpformOut(t, dir, verifyLockProblem, "verify")
	if !strings.Contains(stderr, refused) || !strings.Contains(stderr, hint) || stdout != "" {
		t.Errorf("verify of a lock whose policy was edited:\nstdout %q\nstderr %s\nwant exit 2 with %q and %q", stdout, stderr, refused, hint)
	}
	if _, stderr := mcpformOut(t, dir, verifyLockProblem, "verify", "-json"); !strings.Contains(stderr, refused) {
		t.Errorf("verify -json of a lock whose policy was edited: %s", stderr)
	}
	for _, args := range [][]string{{"plan"}, {"show"}, {"apply", "-auto-approve"}, {"run", "time"}} {
		if _, stderr := mcpformOut(t, dir, 1, args...); !strings.Contains(stderr, refused) {
			t.Errorf("mcpform %s of a lock whose policy was edited: stderr %s, want %q", strings.Join(args, " "), stderr, refused)
		}
	}
	if now, _ := os.ReadFile(lockPath); !bytes.Equal(now, edited) {
		t.Errorf("a refused lock was rewritten:\n%s", now)
	}

	// The lock without its configDigests.
	old := configDigestLine.ReplaceAll(applied, nil)
	writeFiles(t, dir, map[string]string{"mcp.lock": string(old)})
	notes := "Note: server \"modern\" has no configDigest: its command, environment and policy are not integrity-checked; mcpform apply adds one\n" +
		"Note: server \"team.notes\" has no configDigest: its command, environment and policy are not integrity-checked; mcpform apply adds one\n" +
		"Note: server \"time\" has no configDigest: its command, environment and policy are not integrity-checked; mcpform apply adds one\n"
	stdout, stderr = mcpformOut(t, dir, verifyInSync, "verify")
	if !strings.HasPrefix(stderr, notes) || strings.Contains(stdout, "Note:") {
		t.Errorf("verify of a lock without configDigest:\nstdout %s\nstderr %s\nwant the notes first on stderr:\n%s", stdout, stderr, notes)
	}
	stdout, stderr = mcpformOut(t, dir, 0, "show")
	if stderr != notes || !strings.Contains(stdout, `server "time"`) {
		t.Errorf("show of a lock without configDigest:\nstdout %s\nstderr %s\nwant the notes alone on stderr:\n%s", stdout, stderr, notes)
	}
	stdout, stderr = mcpformOut(t, dir, planChanges, "plan", "-detailed-exitcode")
	if !strings.Contains(stderr, notes) {
		t.Errorf("plan's stderr has not the lock's notes:\n%s", stderr)
	}
	for _, want := range []string{
		"\nNote: server \"modern\": the lock's entry has no configDigest; apply adds one (nothing of the server changes)\n",
		"\nNote: server \"team.notes\": the lock's entry has no configDigest; apply adds one (nothing of the server changes)\n",
		"\nNote: server \"time\": the lock's entry has no configDigest; apply adds one (nothing of the server changes)\n",
		"Plan: 0 to add, 0 to change, 0 to remove. Definitional: 0, informational: 0, config: 0. Required bump: none.",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("plan against a lock without configDigest has no %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "will be updated") || strings.Contains(stdout, "configDigest\":") {
		t.Errorf("plan shows the configDigest as a change of a server:\n%s", stdout)
	}
	var jp struct {
		HasChanges bool `json:"has_changes"`
		Servers    []struct {
			Action  string
			Changes []json.RawMessage
		}
		Notes []string
	}
	if err := json.Unmarshal(mcpformIn(t, dir, planChanges, "plan", "-json", "-detailed-exitcode"), &jp); err != nil {
		t.Fatal(err)
	}
	if !jp.HasChanges || len(jp.Servers) != 3 || len(jp.Notes) != 3 {
		t.Errorf("plan -json: has_changes %t, %d servers, notes %q; want true, 3, 3", jp.HasChanges, len(jp.Servers), jp.Notes)
	}
	for _, s := range jp.Servers {
		if s.Action != "no-op" || len(s.Changes) != 0 {
			t.Errorf("plan -json: a server %s with %d changes, want no-op and none", s.Action, len(s.Changes))
		}
	}
	stdout, _ = mcpformOut(t, dir, 0, "apply", "-auto-approve")
	if !strings.Contains(stdout, "Apply complete! Servers: 0 added, 0 changed, 0 removed.") {
		t.Errorf("apply of the configDigests:\n%s", stdout)
	}
	if now, _ := os.ReadFile(lockPath); !bytes.Equal(now, applied) {
		t.Errorf("after apply, the lock is not the one apply wrote from scratch:\n%s\nwant\n%s", now, applied)
	}
	if stdout, stderr := mcpformOut(t, dir, planNoChanges, "plan", "-detailed-exitcode"); !strings.Contains(stdout, "No changes.") || strings.Contains(stdout+stderr, "Note:") {
		t.Errorf("plan after apply:\n%s\n%s", stdout, stderr)
	}
}
