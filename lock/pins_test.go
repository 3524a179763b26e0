package lock

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	nodeSum   = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	scriptSum = "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
)

// pinsFile is the sample lock with pins on its command server "notes": an
// interpreter outside the lock's directory and a script inside it.
func pinsFile(t testing.TB) *File {
	f := sampleFile(t)
	e := f.Servers["notes"]
	e.Command = []string{"node", "server/index.js"}
	e.Mcpform = &Settings{Pins: &Pins{
		Executable: &FilePin{Path: "/usr/bin/node", SHA256: nodeSum},
		Script:     &FilePin{Path: "server/index.js", SHA256: scriptSum},
	}}
	return f
}

// TestPinsRoundTrip: pins are written under the entry's "mcpform" key in
// the documented shape, after its configDigest, read back as written, and
// outside the surface digests; a lock without pins has no pins key, so
// locks written before pins existed keep their bytes but for the
// configDigest (TestGolden pins those).
func TestPinsRoundTrip(t *testing.T) {
	f := pinsFile(t)
	data, err := Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	cd, err := f.Servers["notes"].ComputeConfigDigest()
	if err != nil {
		t.Fatal(err)
	}
	want := `      "mcpform": {
        "configDigest": "` + cd + `",
        "pins": {
          "executable": {
            "path": "/usr/bin/node",
            "sha256": "` + nodeSum + `"
          },
          "script": {
            "path": "server/index.js",
            "sha256": "` + scriptSum + `"
          }
        }
      }
`
	if !bytes.Contains(data, []byte(want)) {
		t.Fatalf("the lock has no pins object as\n%s\nin\n%s", want, data)
	}
	got, err := Parse(data)
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, data)
	}
	if diff := cmp.Diff(f.Servers["notes"].Mcpform.Pins, got.Servers["notes"].Mcpform.Pins); diff != "" {
		t.Errorf("pins after Parse (-want +got):\n%s", diff)
	}
	again, err := Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(data), string(again)); diff != "" {
		t.Errorf("Marshal(Parse(data)) differs (-first +second):\n%s", diff)
	}
	// The digests do not cover the pins: a swapped binary behind the same
	// surface is a change of its own, not drift.
	plain := sampleFile(t).Servers["notes"]
	plain.Command = []string{"node", "server/index.js"}
	if err := plain.Seal(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(plain.Digests, got.Servers["notes"].Digests); diff != "" {
		t.Errorf("digests changed with pins (-without +with):\n%s", diff)
	}

	// An executable alone: no script key.
	f.Servers["notes"].Mcpform.Pins.Script = nil
	data, err = Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(`"script"`)) {
		t.Errorf("a pin without a script has a script key:\n%s", data)
	}
	if _, err := Parse(data); err != nil {
		t.Errorf("Parse of an executable pin alone: %v", err)
	}

	// Without pins, the entry is the bytes it was before pins existed.
	without, err := Marshal(sampleFile(t))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(without, []byte(`"pins"`)) {
		t.Errorf("a lock without pins has a pins key:\n%s", without)
	}
}

func TestParseRefusesPins(t *testing.T) {
	good := goodLock(t, pinsFile(t))
	const exe = `"path": "/usr/bin/node"`
	const sum = `"sha256": "` + nodeSum + `"`
	const pinsKey = `"pins": {
          "executable": {`
	const pinsObject = pinsKey + `
            "path": "/usr/bin/node",
            "sha256": "` + nodeSum + `"
          },
          "script": {
            "path": "server/index.js",
            "sha256": "` + scriptSum + `"
          }
        }`
	checkEditsRefused(t, good, []edit{
		{"unknown pin", pinsKey, `"pins": {
          "image": {}, "executable": {`, `mcpform.pins has an unknown key "image" (known: executable, script)`},
		{"wrong case", `"executable": {`, `"Executable": {`, `mcpform.pins has an unknown key "Executable"`},
		{"unknown file key", exe, exe + `, "size": 1`, `mcpform.pins.executable has an unknown key "size" (known: path, sha256)`},
		{"wrong case file key", exe, `"Path": "/usr/bin/node"`, `mcpform.pins.executable has an unknown key "Path"`},
		{"duplicate key", exe, exe + `, "path": "/bin/node"`, `duplicate key "path"`},
		{"pins not an object", pinsObject, `"pins": []`, `mcpform.pins is not a JSON object`},
		{"pins null", pinsObject, `"pins": null`, `mcpform.pins is not a JSON object`},
		{"file not an object", `"script": {
            "path": "server/index.js",
            "sha256": "` + scriptSum + `"
          }`, `"script": "server/index.js"`, `mcpform.pins.script is not a JSON object`},
		{"no path", exe + `,`, ``, `mcpform.pins.executable.path is missing`},
		{"no sha256", `,
            ` + sum, ``, `mcpform.pins.executable.sha256 is missing`},
		{"empty path", exe, `"path": ""`, `mcpform.pins.executable.path is empty or holds a control character`},
		{"control in path", exe, `"path": "/usr/bin/node\n"`, `mcpform.pins.executable.path is empty or holds a control character`},
		{"path not a string", exe, `"path": 1`, `mcpform.pins.executable.path is not a string`},
		{"path null", exe, `"path": null`, `mcpform.pins.executable.path is not a string`},
		{"upper-case digest", sum, `"sha256": "` + strings.ToUpper(nodeSum) + `"`, `is not 64 lowercase hex digits`},
		{"prefixed digest", sum, `"sha256": "sha256:` + nodeSum + `"`, `is not 64 lowercase hex digits`},
		{"short digest", sum, `"sha256": "` + nodeSum[:63] + `"`, `is not 64 lowercase hex digits`},
		{"empty digest", sum, `"sha256": ""`, `is not 64 lowercase hex digits`},
	})
	// "no executable" above renames the key; refused as missing:
	bad := bytes.Replace(good, []byte(`"executable": {`), []byte(`"x": {`), 1)
	if _, err := Parse(bad); err == nil || !strings.Contains(err.Error(), "mcpform.pins has an unknown key \"x\"") {
		t.Errorf("Parse of pins with an unknown key in place of executable = %v", err)
	}
	noExe := bytes.Replace(good, []byte(`"executable": {
            "path": "/usr/bin/node",
            "sha256": "`+nodeSum+`"
          },`), nil, 1)
	if _, err := Parse(noExe); err == nil || !strings.Contains(err.Error(), "mcpform.pins.executable is missing") {
		t.Errorf("Parse of pins without an executable = %v", err)
	}
}

// TestPinsRefusedOnRemote: a remote server starts no file of ours, so a
// pin on one is a hand edit or a bad merge.
func TestPinsRefusedOnRemote(t *testing.T) {
	e := remoteEntry(t)
	e.Mcpform = &Settings{Pins: &Pins{Executable: &FilePin{Path: "/usr/bin/node", SHA256: nodeSum}}}
	data, err := Marshal(&File{Servers: map[string]*Entry{"r": e}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(data); err == nil || !strings.Contains(err.Error(), "mcpform.pins is set on a remote server") {
		t.Errorf("Parse of a remote entry with pins = %v", err)
	}
}
