package lock

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcpform/mcpform/policy"
)

// driftFile is configFile's lock with on_drift and expose in the time
// server's policy.
func driftFile(t testing.TB) *File {
	t.Helper()
	f := configFile(t)
	e := f.Servers["time"]
	e.Policy.OnDrift = policy.DriftBlockChanged
	e.Policy.Expose = &policy.Expose{Tools: []string{"convert_*"}, Prompts: []string{}}
	return f
}

// TestPolicyDriftRoundTrip: onDrift and expose are written in the policy,
// covered by the configDigest, and read back as they were (an unset
// expose list unset, an empty one empty).
func TestPolicyDriftRoundTrip(t *testing.T) {
	data, err := Marshal(driftFile(t))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(`"onDrift": "block-changed"`)) || !bytes.Contains(data, []byte(`"expose": {`)) {
		t.Fatalf("the lock does not hold onDrift and expose:\n%s", data)
	}
	lf, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	p := lf.Servers["time"].Policy
	if p.OnDrift != policy.DriftBlockChanged || p.Expose == nil || len(p.Expose.Tools) != 1 || p.Expose.Prompts == nil || p.Expose.Resources != nil {
		t.Errorf("read back %+v, expose %#v", p, p.Expose)
	}
	// The configDigest covers both: editing either in the file refuses it.
	for _, edit := range [][2]string{
		{`"onDrift": "block-changed"`, `"onDrift": "insecure-warn"`},
		{`"convert_*"`, `"*"`},
		{`"prompts": [],`, `"prompts": ["ask"],`},
	} {
		if _, err := Parse(replaceLast(data, edit[0], edit[1])); err == nil || !strings.Contains(err.Error(), "configDigest") {
			t.Errorf("edit %s -> %s: %v, want a configDigest mismatch", edit[0], edit[1], err)
		}
	}
}

// TestPolicyWithoutDriftIsUnchanged: a policy without onDrift and expose
// writes the bytes (and configDigest) it wrote before they existed.
func TestPolicyWithoutDriftIsUnchanged(t *testing.T) {
	data, err := Marshal(configFile(t))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("onDrift")) || bytes.Contains(data, []byte("expose")) {
		t.Fatalf("an entry without them writes them:\n%s", data)
	}
	e := timeEntry(t)
	before, err := e.ComputeConfigDigest()
	if err != nil {
		t.Fatal(err)
	}
	e.Policy.OnDrift = ""
	e.Policy.Expose = nil
	if after, _ := e.ComputeConfigDigest(); after != before {
		t.Errorf("configDigest moved: %s -> %s", before, after)
	}
	e.Policy.OnDrift = policy.DriftInsecureWarn
	if after, _ := e.ComputeConfigDigest(); after == before {
		t.Error("the configDigest does not cover onDrift")
	}
}

// TestPolicyDriftRefused: the strict loader refuses unknown onDrift
// values and malformed expose lists.
func TestPolicyDriftRefused(t *testing.T) {
	data, err := Marshal(driftFile(t))
	if err != nil {
		t.Fatal(err)
	}
	data = unchecked(data) // so that each edit meets the policy's check, not the digest's
	for _, tt := range []struct{ from, to, want string }{
		{`"onDrift": "block-changed"`, `"onDrift": "warn"`, `"insecure-warn"`},
		{`"onDrift": "block-changed"`, `"onDrift": "Quarantine"`, "policy.onDrift"},
		{`"onDrift": "block-changed"`, `"onDrift": ""`, "empty"},
		{`"onDrift": "block-changed"`, `"onDrift": 1`, "must be a string"},
		{`"prompts": [],`, `"prompts": null,`, "must be a list"},
		{`"prompts": [],`, `"templates": [],`, "unknown key"},
		{`"prompts": [],`, `"prompts": [""],`, "cannot be empty"},
		{`"prompts": [],`, `"prompts": ["a", "a"],`, "listed twice"},
		{`"prompts": [],`, `"prompts": [1],`, "must be a list"},
		{`"onDrift": "block-changed"`, `"ondrift": "block-changed"`, "ondrift"},
	} {
		bad := replaceLast(data, tt.from, tt.to)
		if bytes.Equal(bad, data) {
			t.Fatalf("edit %s did not apply", tt.from)
		}
		if _, err := Parse(bad); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Parse = %v, want an error containing %q", tt.to, err, tt.want)
		}
	}
}

// replaceLast replaces the last from in data: the time server's entry is
// the lock's last, and the others have lists of the same text.
func replaceLast(data []byte, from, to string) []byte {
	i := bytes.LastIndex(data, []byte(from))
	if i < 0 {
		return data
	}
	return append(append(append([]byte(nil), data[:i]...), to...), data[i+len(from):]...)
}
