package lock

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	pypiWheelSum = "9089580b08bd872d8155e414ec36aaeca1c3c8ad28371ca425107a3de0c307f4"
	pypiReqSum   = "1aaa357d52dab5078ce36137d3002195754a8a153d447d34dfa0cb337da1a63a"
)

// pypiFile is the sample lock with a PyPI record (and the venv python's
// pin) on its command server "notes", started through uvx.
func pypiFile(t testing.TB) *File {
	f := sampleFile(t)
	e := f.Servers["notes"]
	e.Command = []string{"uvx", "mcp-server-fetch==2025.4.7"}
	e.Mcpform = &Settings{
		Pins: &Pins{Executable: &FilePin{Path: "/usr/bin/python3.11", SHA256: nodeSum}},
		PyPI: &PyPI{Package: "mcp-server-fetch", Version: "2025.4.7", SHA256: pypiWheelSum, Index: "https://pypi.org/simple",
			Requirements: FilePin{Path: ".mcpform/pypi/notes/requirements.txt", SHA256: pypiReqSum},
			Script:       "mcp-server-fetch", EntryPoint: "mcp_server_fetch:main"},
	}
	return f
}

// TestPyPIRoundTrip: the PyPI record is written under the entry's
// "mcpform" key beside pins, read back as written, outside the digests,
// and a lock without the record has no pypi key.
func TestPyPIRoundTrip(t *testing.T) {
	f := pypiFile(t)
	data, err := Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	want := `        "pypi": {
          "package": "mcp-server-fetch",
          "version": "2025.4.7",
          "sha256": "` + pypiWheelSum + `",
          "index": "https://pypi.org/simple",
          "requirements": {
            "path": ".mcpform/pypi/notes/requirements.txt",
            "sha256": "` + pypiReqSum + `"
          },
          "script": "mcp-server-fetch",
          "entryPoint": "mcp_server_fetch:main"
        }
`
	if !bytes.Contains(data, []byte(want)) {
		t.Fatalf("the lock has no pypi object as\n%s\nin\n%s", want, data)
	}
	got, err := Parse(data)
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, data)
	}
	if diff := cmp.Diff(f.Servers["notes"].Mcpform.PyPI, got.Servers["notes"].Mcpform.PyPI); diff != "" {
		t.Errorf("pypi after Parse (-want +got):\n%s", diff)
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
		t.Errorf("digests changed with the pypi record (-without +with):\n%s", diff)
	}
	// find-links only: an empty index is kept, not left out.
	f.Servers["notes"].Mcpform.PyPI.Index = ""
	if data, err = Marshal(f); err != nil {
		t.Fatal(err)
	}
	if got, err := Parse(data); err != nil || got.Servers["notes"].Mcpform.PyPI.Index != "" || !bytes.Contains(data, []byte(`"index": ""`)) {
		t.Errorf("Parse with an empty index: %v\n%s", err, data)
	}
	without, err := Marshal(sampleFile(t))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(without, []byte(`"pypi"`)) {
		t.Errorf("a lock without a pypi record has a pypi key:\n%s", without)
	}
}

func TestParseRefusesPyPI(t *testing.T) {
	good := goodLock(t, pypiFile(t))
	const pkg = `"package": "mcp-server-fetch"`
	const ver = `"version": "2025.4.7"`
	const idx = `"index": "https://pypi.org/simple"`
	const rpath = `"path": ".mcpform/pypi/notes/requirements.txt"`
	const script = `"script": "mcp-server-fetch"`
	const ep = `"entryPoint": "mcp_server_fetch:main"`
	checkEditsRefused(t, good, []edit{
		{"unknown key", pkg, pkg + `, "wheel": "x"`, `mcpform.pypi has an unknown key "wheel"`},
		{"wrong case", pkg, `"Package": "mcp-server-fetch"`, `mcpform.pypi has an unknown key "Package"`},
		{"no package", pkg + `,`, ``, `mcpform.pypi.package is missing`},
		{"no index", idx + `,`, ``, `mcpform.pypi.index is missing`},
		{"no entry point", `,
          ` + ep, ``, `mcpform.pypi.entryPoint is missing`},
		{"package not a string", pkg, `"package": 1`, `mcpform.pypi.package is not a string`},
		{"traversal", pkg, `"package": "../../etc"`, `is not a normalised Python package name`},
		{"not normalised", pkg, `"package": "Mcp_Server"`, `is not a normalised Python package name`},
		{"range", ver, `"version": ">=1"`, `is not an exact version`},
		{"local version", ver, `"version": "1.0+evil"`, `is not an exact version`},
		{"wheel digest", `"sha256": "` + pypiWheelSum + `"`, `"sha256": "md5:x"`, `mcpform.pypi.sha256 "md5:x" is not 64 lowercase hex digits`},
		{"file index", idx, `"index": "file:///tmp/wheels"`, `is not an http(s) URL`},
		{"index with a space", idx, `"index": "https://a b/"`, `is not an http(s) URL`},
		{"absolute requirements", rpath, `"path": "/tmp/requirements.txt"`, `is not a relative path inside the lock's directory`},
		{"requirements up", rpath, `"path": "../requirements.txt"`, `is not a relative path inside the lock's directory`},
		{"requirements digest", `"sha256": "` + pypiReqSum + `"`, `"sha256": "x"`, `mcpform.pypi.requirements.sha256 "x" is not 64 lowercase hex digits`},
		{"script path", script, `"script": "../bin/sh"`, `is not a console script name`},
		{"script option", script, `"script": "-c"`, `is not a console script name`},
		{"entry point code", ep, `"entryPoint": "os:system('id')"`, `is not a module:function reference`},
		{"entry point quote", ep, `"entryPoint": "a':b"`, `is not a module:function reference`},
		{"entry point without function", ep, `"entryPoint": "mcp_server_fetch"`, `is not a module:function reference`},
	})
}

func TestPyPIRefusedOnRemote(t *testing.T) {
	e := remoteEntry(t)
	e.Mcpform = &Settings{PyPI: pypiFile(t).Servers["notes"].Mcpform.PyPI}
	data, err := Marshal(&File{Servers: map[string]*Entry{"r": e}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(data); err == nil || !strings.Contains(err.Error(), "mcpform.pypi is set on a remote server") {
		t.Errorf("Parse of a remote entry with a pypi record = %v", err)
	}
}
