package lock

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// configDigestLine is the line the writer writes for mcpform.configDigest.
var configDigestLine = regexp.MustCompile(`(?m)^[ \t]*"configDigest": "sha256:[0-9a-f]{64}",?\n`)

// unchecked is data without its configDigest lines: the lock as another
// writer of the format (or an mcpform from before configDigest) would
// have written it, so that a test can edit what the configDigest covers
// and have the loader judge the edited value itself.
func unchecked(data []byte) []byte { return configDigestLine.ReplaceAll(data, nil) }

// configFile is a lock with every part the configDigest covers: a local
// server with a command, environment, policy (taint and sandbox, limits),
// client capabilities, a declared version and pins, and a remote server.
func configFile(t testing.TB) *File {
	t.Helper()
	e := timeEntry(t)
	e.Tools = append(e.Tools, mustItems(t, Tools,
		`{"name":"send_mail1","inputSchema":{"type":"object"}}`,
		`{"name":"send_mail2","inputSchema":{"type":"object"}}`)...)
	e.Policy.Taint.Sinks = []string{"convert_time", "send_mail1"}
	e.Policy.Sandbox.Limits = nil
	e.Mcpform.ClientCapabilities = json.RawMessage(`{"roots":{"listChanged":true},"sampling":{}}`)
	e.Mcpform.Timeout = "45s"
	e.Mcpform.Pins = &Pins{Executable: &FilePin{Path: "/usr/bin/uvx", SHA256: nodeSum}}
	if err := e.Seal(); err != nil {
		t.Fatal(err)
	}
	return &File{Generator: "mcpform 0.1.0", Servers: map[string]*Entry{"time": e, "remote": remoteEntry(t), "notes": modernEntry(t)}}
}

// TestConfigDigestRoundTrip: every entry gets mcpform.configDigest, first
// in its "mcpform" object (the only key of an entry without settings),
// read back into Entry.ConfigDigest, and the lock round-trips with no
// notes.
func TestConfigDigestRoundTrip(t *testing.T) {
	f := configFile(t)
	data, err := Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	for name, e := range f.Servers {
		cd, err := e.ComputeConfigDigest()
		if err != nil {
			t.Fatal(err)
		}
		if !configDigestForm.MatchString(cd) {
			t.Errorf("%s: ComputeConfigDigest = %q", name, cd)
		}
		if !bytes.Contains(data, []byte("      \"mcpform\": {\n        \"configDigest\": \""+cd+"\"")) {
			t.Errorf("%s: no mcpform object starting with configDigest %s in\n%s", name, cd, data)
		}
	}
	if !bytes.Contains(data, []byte(`      "mcpform": {
        "configDigest": "`)) || bytes.Count(data, []byte(`"configDigest"`)) != 3 {
		t.Errorf("want one configDigest per entry:\n%s", data)
	}
	got, err := Parse(data)
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, data)
	}
	if len(got.Notes) != 0 {
		t.Errorf("Notes = %q, want none", got.Notes)
	}
	for name, e := range got.Servers {
		if want, _ := f.Servers[name].ComputeConfigDigest(); e.ConfigDigest != want {
			t.Errorf("%s: ConfigDigest = %q, want %q", name, e.ConfigDigest, want)
		}
	}
	again, err := Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(data), string(again)); diff != "" {
		t.Errorf("Marshal(Parse(data)) differs (-first +second):\n%s", diff)
	}
	// An entry without settings: the mcpform object holds configDigest
	// alone.
	if !regexp.MustCompile(`"resourceTemplates": \{\}
      \},
      "mcpform": \{
        "configDigest": "sha256:[0-9a-f]{64}"
      \}
    \}`).Match(data) {
		t.Errorf("the notes entry (no settings) has no mcpform object of configDigest alone:\n%s", data)
	}
}

// TestConfigDigestMatchesIndependentImplementation recomputes each
// configDigest without this package's code, as docs/LOCKFILE.md states
// the rule: RFC 8785 and SHA-256 of the object of the entry's command,
// envPassthrough, remote and policy members as the file holds them (those
// it has) and its mcpform object without configDigest.
func TestConfigDigestMatchesIndependentImplementation(t *testing.T) {
	golden, err := os.ReadFile(filepath.Join("testdata", "time.lock"))
	if err != nil {
		t.Fatal(err)
	}
	f := configFile(t)
	f.Servers["time"].Policy.Sandbox.Limits = limitsFile(t).Servers["time"].Policy.Sandbox.Limits
	sample, err := Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, data := range [][]byte{golden, sample} {
		var doc struct {
			Servers map[string]map[string]json.RawMessage
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		for name, e := range doc.Servers {
			var settings map[string]json.RawMessage
			if err := json.Unmarshal(e["mcpform"], &settings); err != nil {
				t.Fatalf("%s: mcpform: %v", name, err)
			}
			var recorded string
			json.Unmarshal(settings["configDigest"], &recorded)
			delete(settings, "configDigest")
			covered := map[string]any{"mcpform": settings}
			for _, k := range []string{"command", "envPassthrough", "remote", "policy"} {
				if v, ok := e[k]; ok {
					covered[k] = v
				}
			}
			whole, err := json.Marshal(covered)
			if err != nil {
				t.Fatal(err)
			}
			if got := independentDigest(t, whole); got != recorded {
				t.Errorf("%s: configDigest %s, independent %s", name, recorded, got)
			}
			checked++
		}
	}
	if checked != 4 {
		t.Errorf("checked %d entries, want 4", checked)
	}
}

// TestConfigDigestRefusesEdits changes, one at a time, one byte of each
// part the surface digests leave out (or, for the taint, points a sink at
// another tool): every edit leaves a lock the format's other rules accept,
// and the loader refuses it naming the server and what to do.
func TestConfigDigestRefusesEdits(t *testing.T) {
	f := configFile(t)
	good := goodLock(t, f)
	timeCD, err := f.Servers["time"].ComputeConfigDigest()
	if err != nil {
		t.Fatal(err)
	}
	last := byte('0') // the digest's last digit, changed: still of the form
	if timeCD[len(timeCD)-1] == '0' {
		last = '1'
	}
	flipped := timeCD[:len(timeCD)-1] + string(last)
	const hint = "were edited after the entry was locked. Restore the file from version control; to change them, change mcp.hcl and run mcpform plan and mcpform apply"
	for _, tt := range []struct{ name, server, old, new string }{
		{"command", "time", `"mcp-server-time==2026.8.18"`, `"mcp-server-time==2026.8.19"`},
		{"command of another server", "notes", `"command": [
        "notes"`, `"command": [
        "noter"`},
		{"envPassthrough", "time", `"envPassthrough": [
        "TZ"`, `"envPassthrough": [
        "TX"`},
		{"remote url", "remote", `"url": "https://mcp.example.com/mcp"`, `"url": "https://mcp.example.org/mcp"`},
		{"remote header", "remote", `"X-Org": "acme"`, `"X-Org": "acmf"`},
		{"remote bearer env", "remote", `"bearerEnv": "EXAMPLE_TOKEN"`, `"bearerEnv": "EXAMPLE_TOKEM"`},
		{"policy sandbox read path", "time", `"~/notes"`, `"~/noter"`},
		{"policy sandbox write path", "time", `"${TMP}/work"`, `"${TMP}/worl"`},
		{"policy network allow", "time", `"api.github.com:443"`, `"api.github.com:444"`},
		{"taint sink moved to another tool", "time", `"send_mail1"
          ]`, `"send_mail2"
          ]`},
		{"taint sink dropped", "time", `"convert_time",
            "send_mail1"
          ]`, `"convert_time"
          ]`},
		{"clientCapabilities", "time", `"listChanged": true
          },
          "sampling"`, `"listChanged": true
          },
          "samplinf"`},
		{"pins sha256", "time", `"sha256": "` + nodeSum + `"`, `"sha256": "1` + nodeSum[1:] + `"`},
		{"pins path", "time", `"path": "/usr/bin/uvx"`, `"path": "/usr/bin/uvy"`},
		{"declared version", "time", `"version": "1.4.0"`, `"version": "1.4.1"`},
		{"timeout", "time", `"timeout": "45s"`, `"timeout": "46s"`},
		{"configDigest itself", "time", timeCD, flipped},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if bytes.Count(good, []byte(tt.old)) != 1 {
				t.Fatalf("the lock has %d of %q, want 1:\n%s", bytes.Count(good, []byte(tt.old)), tt.old, good)
			}
			bad := bytes.Replace(good, []byte(tt.old), []byte(tt.new), 1)
			if _, err := Parse(unchecked(bad)); err != nil {
				t.Fatalf("the edit is one the format's other rules refuse (%v); the test needs an edit only the configDigest catches", err)
			}
			_, err := Parse(bad)
			if err == nil {
				t.Fatalf("Parse accepted the edited lock")
			}
			want := `server "` + tt.server + `": its command, environment, remote, policy or mcpform settings do not match mcpform.configDigest (recorded sha256:`
			if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), hint) {
				t.Errorf("Parse error = %q\nwant it to contain %q and %q", err, want, hint)
			}
		})
	}
}

// TestConfigDigestMissingLoadsWithNote: an entry without configDigest, as
// another writer of the format or an older mcpform writes it (with the
// "mcpform" key or none), loads, and the file's Notes say which; writing
// it back adds the digest.
func TestConfigDigestMissingLoadsWithNote(t *testing.T) {
	data, err := Marshal(configFile(t))
	if err != nil {
		t.Fatal(err)
	}
	old := unchecked(data)
	// The notes and remote entries had nothing else under "mcpform":
	// another writer leaves the key out.
	old = regexp.MustCompile(`,\n\s*"mcpform": \{\s*\}`).ReplaceAll(old, nil)
	if bytes.Contains(old, []byte("configDigest")) || bytes.Count(old, []byte(`"mcpform"`)) != 1 {
		t.Fatalf("the lock without configDigest is not the one this test means:\n%s", old)
	}
	// What the configDigest would have caught, edited where there is none.
	old = bytes.Replace(old, []byte(`"~/notes"`), []byte(`"~/noter"`), 1)
	f, err := Parse(old)
	if err != nil {
		t.Fatalf("Parse of a lock without configDigest: %v", err)
	}
	want := []string{
		`server "notes" has no configDigest: its command, environment and policy are not integrity-checked; mcpform apply adds one`,
		`server "remote" has no configDigest: its command, environment and policy are not integrity-checked; mcpform apply adds one`,
		`server "time" has no configDigest: its command, environment and policy are not integrity-checked; mcpform apply adds one`,
	}
	if diff := cmp.Diff(want, f.Notes); diff != "" {
		t.Errorf("Notes (-want +got):\n%s", diff)
	}
	for name, e := range f.Servers {
		if e.ConfigDigest != "" {
			t.Errorf("%s: ConfigDigest = %q, want none", name, e.ConfigDigest)
		}
	}
	if got := f.Servers["time"].Policy.Sandbox.Filesystem.Read; len(got) != 1 || got[0] != "~/noter" {
		t.Errorf("the read path = %q, want the file's", got)
	}
	again, err := Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(again, []byte(`"configDigest"`)); n != 3 {
		t.Errorf("Marshal wrote %d configDigests, want 3:\n%s", n, again)
	}
	if diff := cmp.Diff(string(unchecked(bytes.Replace(data, []byte(`"~/notes"`), []byte(`"~/noter"`), 1))), string(unchecked(again))); diff != "" {
		t.Errorf("written back, the lock differs beyond its configDigests (-before +after):\n%s", diff)
	}
	back, err := Parse(again)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Notes) != 0 {
		t.Errorf("written back, Notes = %q, want none", back.Notes)
	}

	// The checked-in fixture: lock/testdata/time.lock as mcpform wrote it
	// before configDigest.
	fixture, err := Load(filepath.Join("testdata", "no-config-digest.lock"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{`server "time" has no configDigest: its command, environment and policy are not integrity-checked; mcpform apply adds one`}, fixture.Notes); diff != "" {
		t.Errorf("the fixture's Notes (-want +got):\n%s", diff)
	}
	written, err := Marshal(fixture)
	if err != nil {
		t.Fatal(err)
	}
	current, err := os.ReadFile(filepath.Join("testdata", "time.lock"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(current), string(written)); diff != "" {
		t.Errorf("the fixture written back is not time.lock (-time.lock +written):\n%s", diff)
	}
}

// TestConfigDigestForm: a configDigest that is not "sha256:" and 64
// lowercase hex digits is refused, whatever the entry holds.
func TestConfigDigestForm(t *testing.T) {
	good := goodLock(t, &File{Generator: "x", Servers: map[string]*Entry{"time": timeEntry(t)}})
	cd, err := timeEntry(t).ComputeConfigDigest()
	if err != nil {
		t.Fatal(err)
	}
	hexPart := strings.TrimPrefix(cd, "sha256:")
	notTheForm := func(s string) string {
		return fmt.Sprintf(`server "time": mcpform.configDigest %q is not sha256:<64 lowercase hex>`, s)
	}
	const notAString = `server "time": mcpform.configDigest is not a string`
	var edits []edit
	for _, tt := range []struct{ name, value, want string }{
		{"63 digits", `"sha256:` + hexPart[:63] + `"`, notTheForm("sha256:" + hexPart[:63])},
		{"65 digits", `"sha256:` + hexPart + `0"`, notTheForm("sha256:" + hexPart + "0")},
		{"upper case", `"sha256:` + strings.ToUpper(hexPart) + `"`, notTheForm("sha256:" + strings.ToUpper(hexPart))},
		{"another hash", `"sha512:` + hexPart + `"`, notTheForm("sha512:" + hexPart)},
		{"no prefix", `"` + hexPart + `"`, notTheForm(hexPart)},
		{"empty", `""`, notTheForm("")},
		{"space", `"sha256:` + hexPart + ` "`, notTheForm("sha256:" + hexPart + " ")},
		{"null", `null`, notAString},
		{"number", `1`, notAString},
		{"object", `{"sha256": "` + hexPart + `"}`, notAString},
	} {
		edits = append(edits, edit{tt.name, `"configDigest": "` + cd + `"`, `"configDigest": ` + tt.value, tt.want})
	}
	edits = append(edits,
		edit{"wrong case key", `"configDigest"`, `"configdigest"`, `mcpform has an unknown key "configdigest"`},
		edit{"twice", `"configDigest": "` + cd + `"`, `"configDigest": "` + cd + `", "configDigest": "` + cd + `"`, `duplicate key "configDigest"`},
		edit{"outside mcpform", `"digests": {`, `"configDigest": "` + cd + `", "digests": {`, `the entry has an unknown key "configDigest"`},
		edit{"in digests", `"digests": {`, `"digests": {"config": "` + cd + `",`, `digests has an unknown key "config"`},
	)
	checkEditsRefused(t, good, edits)
	// A JSON string is its value: the digest spelled with an escape is
	// the digest.
	escaped := bytes.Replace(good, []byte(cd+`"`), []byte(cd[:len(cd)-1]+fmt.Sprintf(`\u%04x"`, cd[len(cd)-1])), 1)
	if bytes.Equal(escaped, good) {
		t.Fatal("no digest to escape")
	}
	if f, err := Parse(escaped); err != nil || f.Servers["time"].ConfigDigest != cd {
		t.Errorf("Parse of the configDigest with an escape: %v", err)
	}
}
