package approval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSignatureFileRoundTrip(t *testing.T) {
	k := signers(t, 2)
	f := sigs(sign(t, k[0], "alice@example.com", lockJSON))
	f.Add(sign(t, k[1], "bob@example.com", lockJSON))
	f.Add(sign(t, k[0], "alice@example.com", lockJSON)) // again: replaces
	if len(f.Signatures) != 2 {
		t.Fatalf("%d signatures after signing twice, want 2", len(f.Signatures))
	}
	path := filepath.Join(t.TempDir(), "mcp.lock.sig")
	if err := Save(path, f); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if r := Check(lockPayload(t, lockJSON), back, policyFor(t, 2, "alice@example.com "+k[0].line, "bob@example.com "+k[1].line), CheckOptions{Now: time.Now()}); r.State != Valid {
		t.Fatalf("after a round trip: %s %+v", r.State, r.Findings)
	}
	if err := Save(path, sigs()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("saving no signatures left the file: %v", err)
	}
	if f, err := Load(path); err != nil || len(f.Signatures) != 0 {
		t.Fatalf("a missing file: %v, %v", f, err)
	}
}

func TestParseRefuses(t *testing.T) {
	k := signers(t, 1)
	good := sign(t, k[0], "alice@example.com", lockJSON)
	data, err := Marshal(sigs(good))
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct{ from, to, want string }{
		"unknown key":       {`"kind"`, `"extra": 1, "kind"`, "unknown field"},
		"duplicate key":     {`"kind": "ssh"`, `"kind": "ssh", "kind": "ssh"`, "duplicate"},
		"version":           {`"version": 1`, `"version": 2`, "version 2"},
		"kind":              {`"kind": "ssh"`, `"kind": "pgp"`, `unknown kind "pgp"`},
		"digest":            {`"lockDigest": "sha256:`, `"lockDigest": "sha512:`, "lockDigest must be"},
		"time":              {`"signedAt": "`, `"signedAt": "yesterday`, "RFC 3339"},
		"fingerprint":       {`"key": "SHA256:`, `"key": "MD5:`, "SHA256 fingerprint"},
		"control in signer": {`"signer": "alice`, `"signer": "\u001b[31malice`, "printable"},
		"bundle on ssh":     {`"sshsig"`, `"bundle": {}, "sshsig"`, "no bundle"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			bad := strings.Replace(string(data), c.from, c.to, 1)
			if bad == string(data) {
				t.Fatalf("%q not in the file", c.from)
			}
			if _, err := Parse([]byte(bad)); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
	if _, err := Parse(data); err != nil {
		t.Fatalf("control: the good file: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"version":1,"signatures":[]}`))
	f.Add([]byte(`{"version":1,"signatures":[{"kind":"ssh","signer":"a","key":"SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","lockDigest":"sha256:0000000000000000000000000000000000000000000000000000000000000000","signedAt":"2026-12-02T00:00:00Z","sshsig":"-----BEGIN SSH SIGNATURE-----\nAA==\n-----END SSH SIGNATURE-----\n"}]}`))
	f.Add([]byte(`{"version":1,"signatures":[{"kind":"sigstore","signer":"a","key":"b","lockDigest":"sha256:0000000000000000000000000000000000000000000000000000000000000000","signedAt":"2026-12-02T00:00:00Z","bundle":{}}]}`))
	payload := []byte(`{"servers":{}}`)
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse(data)
		if err != nil {
			return
		}
		out, err := Marshal(file)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(out); err != nil {
			t.Fatalf("a parsed file does not parse once written: %v", err)
		}
		// Checking garbage signatures must not panic, and never approves.
		if r := Check(payload, file, &Policy{Required: 1, Revoked: map[string]bool{}}, CheckOptions{Now: time.Now()}); r.State == Valid {
			t.Fatal("a fuzzed file approved a lock")
		}
	})
}
