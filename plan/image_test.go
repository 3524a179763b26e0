package plan

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpform/mcpform/internal/imagetest"
	"github.com/mcpform/mcpform/lang"
	"github.com/mcpform/mcpform/lock"
)

const (
	digestA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	digestB = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

func TestImageChanges(t *testing.T) {
	rec := func(ref, d string) *lock.Image { return &lock.Image{Reference: ref, Digest: d} }
	base := rec("ghcr.io/acme/srv:1.2", digestA)
	for _, tt := range []struct {
		name      string
		newServer bool
		old, live *lock.Image
		want      []string // rule address action grade security
		detail    string
	}{
		{"unchanged", false, base, base, nil, ""},
		{"new server", true, nil, base, nil, ""},
		{"locked before images", false, nil, base, []string{"PKG-IMAGE-ADDED server.s.image create none false"}, "ghcr.io/acme/srv:1.2 is pinned by its digest " + digestA},
		{"tag moved", false, base, rec("ghcr.io/acme/srv:1.2", digestB), []string{"PKG-IMAGE-CHANGED server.s.image.digest update major true"},
			"ghcr.io/acme/srv:1.2 now names another image: " + digestB + ", locked " + digestA},
		{"another image", false, base, rec("ghcr.io/evil/srv:1.2", digestB), []string{"PKG-IMAGE-CHANGED server.s.image update major true"},
			"mcp.hcl runs the image ghcr.io/evil/srv:1.2"},
		{"another tag, same digest", false, base, rec("ghcr.io/acme/srv:latest", digestA), []string{"PKG-IMAGE-CHANGED server.s.image update major true"}, "the lock pins ghcr.io/acme/srv:1.2"},
		{"escaped", false, nil, rec("ghcr.io/acme/srv\x1b[2J", digestA), []string{"PKG-IMAGE-ADDED server.s.image create none false"}, `ghcr.io/acme/srv\u001b[2J`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			details := ""
			for _, c := range imageChanges("server.s", tt.newServer, tt.old, tt.live) {
				seenRules[c.Rule] = true
				got = append(got, fmt.Sprintf("%s %s %s %s %v", c.Rule, c.Addr, c.Action, c.Grade, c.Security))
				details += c.Detail
				if c.Class != Code || c.After == nil || (c.Action == Update) != (c.Before != nil) {
					t.Errorf("%s: class %v, before %s, after %s", c.Rule, c.Class, c.Before, c.After)
				}
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if !strings.Contains(details, tt.detail) {
				t.Errorf("detail %q lacks %q", details, tt.detail)
			}
			if strings.ContainsRune(details, 0x1b) {
				t.Errorf("detail holds a raw escape: %q", details)
			}
		})
	}
}

// fakeDocker puts a fake docker first on PATH and returns the file its
// argv is logged to and the file it reads the expected digest from. A fake
// stands in for docker only because no container engine can run on the
// machines mcpform is tested on (docker there is a client with no daemon):
// the registry it is tested against is real (internal/imagetest), and the
// fake checks what matters, that the image it is asked to run is the
// pinned digest, before it starts mcpform's fake MCP server in place of
// the container.
func fakeDocker(t *testing.T, surface string) (argvLog, want string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	argvLog, want = filepath.Join(dir, "argv.log"), filepath.Join(dir, "want")
	spec := filepath.Join(dir, "surface.json")
	script := fmt.Sprintf(`#!/bin/sh
read -r want < %[1]q
printf '%%s\n' "$*" >> %[2]q
case " $* " in
*"@$want "*) ;;
*) echo "fake docker: the image is not the pinned digest $want: $*" >&2; exit 97 ;;
esac
export MCPFORM_FAKEMCP=1
exec %[3]q %[4]q
`, want, argvLog, exe, spec)
	for name, data := range map[string]string{"docker": script, "surface.json": surface} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("DOCKER_CONFIG", t.TempDir()) // no credentials of this machine's
	return argvLog, want
}

// TestMakeImage: plan resolves a container server's tag to its digest on a
// real registry before the probe and probes the image by that digest (the
// fake docker refuses anything else), and the entry records the digest
// and docker as the executable. A re-tag on the registry is
// PKG-IMAGE-CHANGED against the lock, with no surface change; another
// image in mcp.hcl is too; a tag that does not resolve is the server's
// error, and nothing is started.
func TestMakeImage(t *testing.T) {
	reg := imagetest.Start(t)
	ref := reg.Host + "/acme/srv:1.2"
	first := imagetest.Push(t, ref)
	argvLog, want := fakeDocker(t, `{"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}`)
	setWant := func(d string) {
		if err := os.WriteFile(want, []byte(d+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	setWant(first)
	dir := t.TempDir()
	server := &lang.Server{Name: "s", Addr: "server.s", Command: []string{"docker", "run", "-i", "--rm", ref, "stdio"}, Protocol: "auto"}
	cfg := &lang.Config{Dir: dir, Lockfile: filepath.Join(dir, "mcp.lock"), Servers: []*lang.Server{server}}
	plan := func(locked *lock.File) *ServerPlan {
		t.Helper()
		p, err := Make(t.Context(), cfg, locked, nil, Options{LookupEnv: func(string) (string, bool) { return "", false }})
		if err != nil {
			t.Fatal(err)
		}
		return p.Servers[0]
	}
	sp := plan(nil)
	if sp.Error != "" {
		t.Fatalf("plan error: %s", sp.Error)
	}
	im := sp.Entry.Mcpform.Image
	if im == nil || im.Reference != ref || im.Digest != first || im.MediaType == "" {
		t.Fatalf("image record %+v; want %s at %s", im, ref, first)
	}
	if got := strings.Join(sp.Entry.Command, " "); got != "docker run -i --rm "+ref+" stdio" {
		t.Errorf("the locked command is %q, not mcp.hcl's", got)
	}
	if pins := sp.Entry.Mcpform.Pins; pins == nil || filepath.Base(pins.Executable.Path) != "docker" {
		t.Errorf("pins %+v: want the engine, docker", pins)
	}
	if !strings.Contains(sp.Changes[0].Detail, "pins the image "+ref+" by its digest "+first) {
		t.Errorf("the new server's change does not say its image: %q", sp.Changes[0].Detail)
	}
	logged, _ := os.ReadFile(argvLog)
	if wantArgv := "run -i --rm " + reg.Host + "/acme/srv@" + first + " stdio\n"; string(logged) != wantArgv {
		t.Errorf("the probe started docker %q, want %q", logged, wantArgv)
	}

	// The tag moves to another image with the same surface.
	locked := &lock.File{Servers: map[string]*lock.Entry{"s": sp.Entry}}
	second := imagetest.Push(t, ref)
	setWant(second)
	sp = plan(locked)
	if sp.Error != "" {
		t.Fatalf("plan error after the re-tag: %s", sp.Error)
	}
	if len(sp.Changes) != 1 || sp.Changes[0].Rule != "PKG-IMAGE-CHANGED" || sp.Action != Update || sp.RequiredBump != None || !sp.Changes[0].Security {
		t.Fatalf("after the re-tag: action %v, bump %v, changes %+v; want one PKG-IMAGE-CHANGED", sp.Action, sp.RequiredBump, sp.Changes)
	}
	if c := sp.Changes[0]; string(c.Before) != `"`+first+`"` || string(c.After) != `"`+second+`"` || sp.Entry.Mcpform.Image.Digest != second {
		t.Errorf("the change shows %s -> %s, entry %s; want %s -> %s", c.Before, c.After, sp.Entry.Mcpform.Image.Digest, first, second)
	}
	// Planned again against a lock of the new digest: no change, and the
	// record is the locked one.
	lockedB := &lock.File{Servers: map[string]*lock.Entry{"s": sp.Entry}}
	if sp = plan(lockedB); len(sp.Changes) != 0 || sp.Entry.Mcpform.Image != lockedB.Servers["s"].Mcpform.Image {
		t.Errorf("an unchanged image: changes %+v", sp.Changes)
	}

	// Another image in mcp.hcl.
	other := reg.Host + "/evil/srv:1.2"
	third := imagetest.Push(t, other)
	setWant(third)
	server.Command = []string{"docker", "run", "-i", "--rm", other, "stdio"}
	sp = plan(lockedB)
	var rules []string
	for _, c := range sp.Changes {
		rules = append(rules, c.Rule+" "+c.Addr)
	}
	if got := strings.Join(rules, ", "); got != "CFG-COMMAND-CHANGED server.s.command, PKG-IMAGE-CHANGED server.s.image" {
		t.Errorf("another image: %s", got)
	}

	// A reference with a tag and a digest: the digest is pinned without
	// asking the registry, and the plan says the tag is ignored.
	setWant(first)
	server.Command = []string{"docker", "run", "-i", "--rm", ref + "@" + first, "stdio"}
	requests := reg.Requests.Load()
	p, err := Make(t.Context(), cfg, nil, nil, Options{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	if sp = p.Servers[0]; sp.Error != "" || sp.Entry.Mcpform.Image.Digest != first || sp.Entry.Mcpform.Image.MediaType != "" {
		t.Errorf("a digest reference: error %q, record %+v", sp.Error, sp.Entry.Mcpform.Image)
	}
	if got := reg.Requests.Load() - requests; got != 0 {
		t.Errorf("%d registry requests for a digest reference", got)
	}
	if notes := strings.Join(p.Notes, "\n"); !strings.Contains(notes, "names a tag and a digest: the digest is pinned and the tag ignored") {
		t.Errorf("no note of the ignored tag: %q", notes)
	}

	// A tag the registry does not have: the server's error, nothing
	// started, no entry.
	before, _ := os.ReadFile(argvLog)
	server.Command = []string{"docker", "run", "-i", reg.Host + "/acme/srv:9.9"}
	sp = plan(lockedB)
	if sp.Entry != nil || !strings.Contains(sp.Error, "mcpform cannot resolve the image "+reg.Host+"/acme/srv:9.9") ||
		!strings.Contains(sp.Error, "no such image or tag") || !strings.Contains(sp.Error, "the lock is not changed") {
		t.Errorf("an unknown tag: entry %v, error %q", sp.Entry != nil, sp.Error)
	}
	// A command mcpform cannot pin: the same.
	server.Command = []string{"docker", "run", "--frobnicate", "x", ref}
	if sp = plan(lockedB); sp.Entry != nil || !strings.Contains(sp.Error, "cannot pin this command") || !strings.Contains(sp.Error, "--frobnicate") {
		t.Errorf("an unknown flag: entry %v, error %q", sp.Entry != nil, sp.Error)
	}
	if after, _ := os.ReadFile(argvLog); !bytes.Equal(before, after) {
		t.Errorf("docker was started for a server whose image was not pinned:\n%s", after[len(before):])
	}
}
