package lock

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	npmIntegrity = "sha512-" + "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=="
	npmLockSum   = "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789"
)

// npmFile is the sample lock with an npm record (and node's pin) on its
// command server "notes", started through npx.
func npmFile(t testing.TB) *File {
	f := sampleFile(t)
	e := f.Servers["notes"]
	e.Command = []string{"npx", "-y", "@modelcontextprotocol/server-everything@2026.8.31", "stdio"}
	e.Mcpform = &Settings{
		Pins: &Pins{Executable: &FilePin{Path: "/usr/bin/node", SHA256: nodeSum}},
		NPM: &NPM{Package: "@modelcontextprotocol/server-everything", Version: "2026.8.31", Integrity: npmIntegrity,
			Registry: "https://registry.npmjs.org/", Lockfile: FilePin{Path: ".mcpform/npm/notes/package-lock.json", SHA256: npmLockSum},
			Bin: "dist/index.js", InstallScripts: []string{"node_modules/esbuild"}},
	}
	return f
}

// TestNPMRoundTrip: the npm record is written under the entry's "mcpform"
// key beside pins, read back as written, outside the digests; an empty
// installScripts is left out, and a lock without the record has no npm key.
func TestNPMRoundTrip(t *testing.T) {
	f := npmFile(t)
	data, err := Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	want := `        "npm": {
          "package": "@modelcontextprotocol/server-everything",
          "version": "2026.8.31",
          "integrity": "` + npmIntegrity + `",
          "registry": "https://registry.npmjs.org/",
          "lockfile": {
            "path": ".mcpform/npm/notes/package-lock.json",
            "sha256": "` + npmLockSum + `"
          },
          "bin": "dist/index.js",
          "installScripts": [
            "node_modules/esbuild"
          ]
        }
`
	if !bytes.Contains(data, []byte(want)) {
		t.Fatalf("the lock has no npm object as\n%s\nin\n%s", want, data)
	}
	got, err := Parse(data)
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, data)
	}
	if diff := cmp.Diff(f.Servers["notes"].Mcpform.NPM, got.Servers["notes"].Mcpform.NPM); diff != "" {
		t.Errorf("npm after Parse (-want +got):\n%s", diff)
	}
	again, err := Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(data), string(again)); diff != "" {
		t.Errorf("Marshal(Parse(data)) differs (-first +second):\n%s", diff)
	}
	plain := sampleFile(t).Servers["notes"]
	plain.Command = f.Servers["notes"].Command
	if err := plain.Seal(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(plain.Digests, got.Servers["notes"].Digests); diff != "" {
		t.Errorf("digests changed with the npm record (-without +with):\n%s", diff)
	}
	f.Servers["notes"].Mcpform.NPM.InstallScripts = nil
	if data, err = Marshal(f); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(`"installScripts"`)) {
		t.Errorf("a record without install scripts has the key:\n%s", data)
	}
	if _, err := Parse(data); err != nil {
		t.Errorf("Parse without installScripts: %v", err)
	}
	f.Servers["notes"].Mcpform.NPM.AllowInstallScripts = true
	if data, err = Marshal(f); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(`"bin": "dist/index.js",
          "allowInstallScripts": true
        }`)) {
		t.Errorf("a record that allows install scripts does not say so last:\n%s", data)
	}
	if got, err := Parse(data); err != nil || !got.Servers["notes"].Mcpform.NPM.AllowInstallScripts {
		t.Errorf("Parse with allowInstallScripts: %v", err)
	}
	without, err := Marshal(sampleFile(t))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(without, []byte(`"npm"`)) {
		t.Errorf("a lock without an npm record has an npm key:\n%s", without)
	}
}

func TestParseRefusesNPM(t *testing.T) {
	good := goodLock(t, npmFile(t))
	const pkg = `"package": "@modelcontextprotocol/server-everything"`
	const integ = `"integrity": "` + npmIntegrity + `"`
	const reg = `"registry": "https://registry.npmjs.org/"`
	const lpath = `"path": ".mcpform/npm/notes/package-lock.json"`
	const bin = `"bin": "dist/index.js"`
	checkEditsRefused(t, good, []edit{
		{"unknown key", pkg, pkg + `, "tarball": "x"`, `mcpform.npm has an unknown key "tarball"`},
		{"wrong case", pkg, `"Package": "@modelcontextprotocol/server-everything"`, `mcpform.npm has an unknown key "Package"`},
		{"no package", pkg + `,`, ``, `mcpform.npm.package is missing`},
		{"package not a string", pkg, `"package": 1`, `mcpform.npm.package is not a string`},
		{"traversal", pkg, `"package": "../../etc"`, `is not an npm package name`},
		{"capitals", pkg, `"package": "Foo"`, `is not an npm package name`},
		{"sha1 integrity", integ, `"integrity": "sha1-AAAAAAAAAAAAAAAAAAAAAAAAAAA="`, `is not an SRI sha512 digest`},
		{"file registry", reg, `"registry": "file:///tmp/"`, `is not an http(s) URL ending in /`},
		{"registry without slash", reg, `"registry": "https://registry.npmjs.org"`, `is not an http(s) URL ending in /`},
		{"absolute lockfile", lpath, `"path": "/tmp/package-lock.json"`, `is not a relative path inside the lock's directory`},
		{"lockfile up", lpath, `"path": "../package-lock.json"`, `is not a relative path inside the lock's directory`},
		{"lockfile digest", `"sha256": "` + npmLockSum + `"`, `"sha256": "x"`, `mcpform.npm.lockfile.sha256 "x" is not 64 lowercase hex digits`},
		{"bin up", bin, `"bin": "../../x.js"`, `is not a path inside the package`},
		{"bin absolute", bin, `"bin": "/x.js"`, `is not a path inside the package`},
		{"scripts not a list", `"installScripts": [
            "node_modules/esbuild"
          ]`, `"installScripts": "node_modules/esbuild"`, `mcpform.npm.installScripts is not a list of strings`},
		{"scripts empty", `"installScripts": [
            "node_modules/esbuild"
          ]`, `"installScripts": []`, `mcpform.npm.installScripts is empty`},
		{"scripts allowed false", bin, bin + `, "allowInstallScripts": false`, `mcpform.npm.allowInstallScripts is false, not true; false is left out`},
		{"scripts allowed not a bool", bin, bin + `, "allowInstallScripts": "yes"`, `mcpform.npm.allowInstallScripts is "yes", not true`},
	})
}

func TestNPMRefusedOnRemote(t *testing.T) {
	e := remoteEntry(t)
	e.Mcpform = &Settings{NPM: npmFile(t).Servers["notes"].Mcpform.NPM}
	data, err := Marshal(&File{Servers: map[string]*Entry{"r": e}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(data); err == nil || !strings.Contains(err.Error(), "mcpform.npm is set on a remote server") {
		t.Errorf("Parse of a remote entry with an npm record = %v", err)
	}
}

// provenanceFile is npmFile with a verified provenance on the npm record.
func provenanceFile(t testing.TB) *File {
	f := npmFile(t)
	f.Servers["notes"].Mcpform.NPM.Provenance = &Provenance{Repository: "https://github.com/modelcontextprotocol/servers",
		Workflow: ".github/workflows/release.yml@refs/heads/main", Commit: "dae8bd8eb433a4147b4655c00fe73e0f22bc0fb1"}
	return f
}

// TestNPMProvenanceRoundTrip: the provenance is written last in the npm
// record, read back as written, outside the digests; without a commit the
// key is left out; a record without provenance has no key.
func TestNPMProvenanceRoundTrip(t *testing.T) {
	f := provenanceFile(t)
	data, err := Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	want := `          "installScripts": [
            "node_modules/esbuild"
          ],
          "provenance": {
            "repository": "https://github.com/modelcontextprotocol/servers",
            "workflow": ".github/workflows/release.yml@refs/heads/main",
            "commit": "dae8bd8eb433a4147b4655c00fe73e0f22bc0fb1"
          }
        }
`
	if !bytes.Contains(data, []byte(want)) {
		t.Fatalf("the lock has no provenance as\n%s\nin\n%s", want, data)
	}
	got, err := Parse(data)
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, data)
	}
	if diff := cmp.Diff(f.Servers["notes"].Mcpform.NPM, got.Servers["notes"].Mcpform.NPM); diff != "" {
		t.Errorf("npm after Parse (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(npmFile(t).Servers["notes"].Digests, got.Servers["notes"].Digests); diff != "" {
		t.Errorf("digests changed with the provenance (-without +with):\n%s", diff)
	}
	f.Servers["notes"].Mcpform.NPM.Provenance.Commit = ""
	if data, err = Marshal(f); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(`"commit"`)) {
		t.Errorf("a provenance without a commit has the key:\n%s", data)
	}
	if got, err := Parse(data); err != nil || got.Servers["notes"].Mcpform.NPM.Provenance.Commit != "" {
		t.Errorf("Parse without a commit: %v", err)
	}
	without, err := Marshal(npmFile(t))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(without, []byte(`"provenance"`)) {
		t.Errorf("a record without provenance has the key:\n%s", without)
	}
}

func TestParseRefusesNPMProvenance(t *testing.T) {
	good := goodLock(t, provenanceFile(t))
	const repo = `"repository": "https://github.com/modelcontextprotocol/servers"`
	const wf = `"workflow": ".github/workflows/release.yml@refs/heads/main"`
	const commit = `"commit": "dae8bd8eb433a4147b4655c00fe73e0f22bc0fb1"`
	const provenanceJSON = `"provenance": {
            ` + repo + `,
            ` + wf + `,
            ` + commit + `
          }`
	checkEditsRefused(t, good, []edit{
		{"unknown key", repo, repo + `, "builder": "x"`, `mcpform.npm.provenance has an unknown key "builder"`},
		{"wrong case", repo, `"Repository": "https://github.com/modelcontextprotocol/servers"`, `mcpform.npm.provenance has an unknown key "Repository"`},
		{"not an object", provenanceJSON, `"provenance": "x"`, `mcpform.npm.provenance`},
		{"no repository", repo + `,`, ``, `mcpform.npm.provenance.repository is missing`},
		{"no workflow", wf + `,`, ``, `mcpform.npm.provenance.workflow is missing`},
		{"repository not a string", repo, `"repository": 1`, `mcpform.npm.provenance.repository is not a string`},
		{"http repository", repo, `"repository": "http://github.com/a/b"`, `is not an https URL`},
		{"empty repository", repo, `"repository": ""`, `is not an https URL`},
		{"repository with a newline", repo, `"repository": "https://github.com/a/b\nforged"`, `is not an https URL`},
		{"empty workflow", wf, `"workflow": ""`, `is not a workflow`},
		{"workflow with a space", wf, `"workflow": "a b"`, `is not a workflow`},
		{"short commit", commit, `"commit": "dae8bd8"`, `is not a git commit id`},
		{"empty commit", commit, `"commit": ""`, `is not a git commit id`},
		{"duplicate key", repo, repo + `, ` + repo, `duplicate`},
	})
}
