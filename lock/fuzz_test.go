package lock

import (
	"bytes"
	"os"
	"path/filepath"
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
		out2, _ := Marshal(again)
		if !bytes.Equal(out, out2) {
			t.Fatalf("Marshal is not stable:\n%s\n---\n%s", out, out2)
		}
	})
}
