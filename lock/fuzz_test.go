package lock

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"

	"github.com/mcpform/mcpform/internal/strictjson"
)

// FuzzCanonicalMatchesJCS holds the one-pass canonicalizer to
// gowebpki/jcs's Transform on every strict JSON value.
func FuzzCanonicalMatchesJCS(f *testing.F) {
	for _, s := range []string{
		`{"b":1,"a":[1.50,-0,1e21,1e-7,123456789012345678],"\u00e9":"\u001f\"\\/","😀":1,"\uffff":2}`,
		`{"name":"t","inputSchema":{"type":"object","properties":{"x":{"default":0.1}}}}`,
		`"\ud83d\ude00 \u2028"`, `[true,false,null,{}]`, `-1.0E+2`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if strictjson.Check(data) != nil {
			return
		}
		want, err := jcs.Transform(data)
		got, _, err2 := appendCanonical(nil, data)
		if err != nil {
			if err2 == nil {
				// jcs refuses some numbers (NaN-like overflow); so must we.
				if _, ferr := canonicalNumber(bytes.TrimSpace(data)); ferr == nil {
					t.Skipf("jcs refused %q: %v", data, err)
				}
			}
			return
		}
		if err2 != nil {
			t.Fatalf("appendCanonical(%q): %v; jcs gives %q", data, err2, want)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("appendCanonical(%q)\n got %q\nwant %q", data, got, want)
		}
	})
}

// FuzzParse feeds arbitrary bytes to the loader: it must never panic, and a
// lock it accepts must round-trip byte-identically through Marshal.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"time.lock"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"lockfileVersion":1,"generator":"x","servers":{}}`))
	f.Add([]byte(`{"lockfileVersion":3,"servers":{}}`))
	if data, err := Marshal(&File{Generator: "x", Servers: map[string]*Entry{"remote": remoteEntry(f)}}); err == nil {
		f.Add(data)
	}
	// Pins (mcpform.pins): an executable and a script, and an executable
	// alone.
	if data, err := Marshal(pinsFile(f)); err == nil {
		f.Add(data)
		f.Add(bytes.Replace(data, []byte(`"script"`), []byte(`"Script"`), 1))
	}
	pf := pinsFile(f)
	pf.Servers["notes"].Mcpform.Pins.Script = nil
	if data, err := Marshal(pf); err == nil {
		f.Add(data)
	}
	// An npm record (mcpform.npm) beside node's pin, and one with a
	// lockfile path out of the lock's directory.
	if data, err := Marshal(npmFile(f)); err == nil {
		f.Add(data)
		f.Add(bytes.Replace(data, []byte(`".mcpform/npm/`), []byte(`"../npm/`), 1))
	}
	// An image record (mcpform.image) beside docker's pin.
	if data, err := Marshal(imageFile(f)); err == nil {
		f.Add(data)
	}
	// A PyPI record (mcpform.pypi) beside python's pin, and one whose
	// entry point is code rather than a reference.
	if data, err := Marshal(pypiFile(f)); err == nil {
		f.Add(data)
		f.Add(bytes.Replace(data, []byte(`"mcp_server_fetch:main"`), []byte(`"os:system('id')"`), 1))
	}
	// The configDigest (mcpform.configDigest): a lock with every part it
	// covers, the same without it (another writer's: it loads with a
	// note), with a covered part edited (refused), and with a digest not
	// of its form.
	if data, err := Marshal(configFile(f)); err == nil {
		f.Add(data)
		f.Add(unchecked(data))
		f.Add(bytes.Replace(data, []byte(`"api.github.com:443"`), []byte(`"api.github.com:444"`), 1))
		f.Add(bytes.Replace(data, []byte(`"configDigest": "sha256:`), []byte(`"configDigest": "sha256:0`), 1))
	}
	// on_drift and expose in the policy: as written, and with a mode the
	// loader refuses and an expose list that is not one.
	if data, err := Marshal(driftFile(f)); err == nil {
		f.Add(data)
		f.Add(unchecked(data))
		f.Add(bytes.Replace(unchecked(data), []byte(`"block-changed"`), []byte(`"warn"`), 1))
		f.Add(replaceLast(unchecked(data), `"prompts": [],`, `"prompts": null,`))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lf, err := Parse(data)
		if err != nil {
			return
		}
		out, err := Marshal(lf)
		if err != nil {
			t.Fatalf("Marshal of a parsed lock: %v", err)
		}
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(Marshal(Parse(data))): %v\n%s", err, out)
		}
		// Marshal writes every entry's configDigest: what it wrote loads
		// without a note.
		if len(again.Notes) != 0 {
			t.Fatalf("Parse(Marshal(Parse(data))) has notes %q", again.Notes)
		}
		out2, _ := Marshal(again)
		if !bytes.Equal(out, out2) {
			t.Fatalf("Marshal is not stable:\n%s\n---\n%s", out, out2)
		}
	})
}

// FuzzParsePins feeds arbitrary bytes as an entry's mcpform.pins object,
// inside an otherwise valid lock: the loader must never panic, refuse what
// is not a pins object of the format, and a lock it accepts must keep its
// pins through Marshal and Parse.
func FuzzParsePins(f *testing.F) {
	for _, s := range []string{
		`{"executable":{"path":"/usr/bin/node","sha256":"` + nodeSum + `"},"script":{"path":"server/index.js","sha256":"` + scriptSum + `"}}`,
		`{"executable":{"path":"bin/notes","sha256":"` + nodeSum + `"}}`,
		`{"script":{"path":"a","sha256":"` + scriptSum + `"}}`,
		`{"executable":{"path":"\u0000","sha256":"` + nodeSum + `"}}`,
		`{"executable":{"Path":"x","sha256":"` + nodeSum + `"}}`,
		`{"executable":{"path":"x","sha256":"` + strings.ToUpper(nodeSum) + `"}}`,
		`{"executable":null}`, `[]`, `null`, `{}`,
	} {
		f.Add([]byte(s))
	}
	// The template has no configDigest, as a lock of another writer: the
	// fuzzed pins are the loader's to judge, not a hand edit.
	tmpl, err := Marshal(pinsFile(f))
	if err != nil {
		f.Fatal(err)
	}
	tmpl = unchecked(tmpl)
	start := bytes.Index(tmpl, []byte(`"pins": {`)) + len(`"pins": `)
	end := bytes.Index(tmpl[start:], []byte("\n        }\n")) + start + len("\n        }")
	splice := func(pins []byte) []byte {
		return append(append(append([]byte{}, tmpl[:start]...), pins...), tmpl[end:]...)
	}
	// The template must hold: the first seed is a lock the loader accepts.
	if _, err := Parse(splice([]byte(`{"executable":{"path":"bin/notes","sha256":"` + nodeSum + `"}}`))); err != nil {
		f.Fatalf("the template with a valid pins object: %v", err)
	}
	f.Fuzz(func(t *testing.T, pins []byte) {
		lf, err := Parse(splice(pins))
		if err != nil {
			return
		}
		p := lf.Servers["notes"].Mcpform.Pins
		if p == nil || p.Executable == nil || !sha256Hex.MatchString(p.Executable.SHA256) || p.Executable.Path == "" {
			t.Fatalf("accepted pins %s as %+v", pins, p)
		}
		out, err := Marshal(lf)
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(Marshal(Parse(data))): %v\n%s", err, out)
		}
		if q := again.Servers["notes"].Mcpform.Pins; *q.Executable != *p.Executable || (q.Script == nil) != (p.Script == nil) || q.Script != nil && *q.Script != *p.Script {
			t.Fatalf("pins changed through Marshal: %+v -> %+v", p, q)
		}
	})
}

// FuzzParseImage feeds arbitrary bytes as an entry's mcpform.image object,
// inside an otherwise valid lock: the loader must never panic, refuse what
// is not an image record of the format, and a lock it accepts must keep
// its record through Marshal and Parse.
func FuzzParseImage(f *testing.F) {
	for _, s := range []string{
		`{"reference":"ghcr.io/acme/notes:1.2","digest":"` + imageDigestSample + `","mediaType":"application/vnd.oci.image.index.v1+json"}`,
		`{"reference":"alpine","digest":"` + imageDigestSample + `"}`,
		`{"reference":"alpine","digest":"` + strings.ToUpper(imageDigestSample) + `"}`,
		`{"reference":"a\u0000","digest":"` + imageDigestSample + `"}`,
		`{"Reference":"alpine","digest":"` + imageDigestSample + `"}`,
		`{"reference":"alpine","digest":"` + imageDigestSample + `","mediaType":""}`,
		`{"reference":"alpine"}`, `[]`, `null`, `{}`,
	} {
		f.Add([]byte(s))
	}
	tmpl, err := Marshal(imageFile(f))
	if err != nil {
		f.Fatal(err)
	}
	tmpl = unchecked(tmpl) // as FuzzParsePins
	start := bytes.Index(tmpl, []byte(`"image": {`)) + len(`"image": `)
	end := bytes.Index(tmpl[start:], []byte("\n        }\n")) + start + len("\n        }")
	splice := func(rec []byte) []byte {
		return append(append(append([]byte{}, tmpl[:start]...), rec...), tmpl[end:]...)
	}
	if _, err := Parse(splice([]byte(`{"reference":"alpine","digest":"` + imageDigestSample + `"}`))); err != nil {
		f.Fatalf("the template with a valid image object: %v", err)
	}
	f.Fuzz(func(t *testing.T, rec []byte) {
		lf, err := Parse(splice(rec))
		if err != nil {
			return
		}
		im := lf.Servers["notes"].Mcpform.Image
		if im == nil || !imageDigest.MatchString(im.Digest) || im.Reference == "" || len(im.Reference) > MaxImageReference ||
			strings.ContainsFunc(im.Reference, func(r rune) bool { return r <= 0x20 || r >= 0x7f }) {
			t.Fatalf("accepted image %s as %+v", rec, im)
		}
		out, err := Marshal(lf)
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(Marshal(Parse(data))): %v\n%s", err, out)
		}
		if q := again.Servers["notes"].Mcpform.Image; *q != *im {
			t.Fatalf("image changed through Marshal: %+v -> %+v", im, q)
		}
	})
}
