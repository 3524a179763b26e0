package approval

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sigstore/sigstore-go/pkg/root"
	"golang.org/x/crypto/ssh"

	"github.com/mcpform/mcpform/internal/sigstoretest"
)

// What checking a lock's approvals costs every command that uses the lock
// (verify, run, plan, show, apply): the canonicalisation of the lock, and
// Check of its signatures against a trust policy.
//
//	go test ./approval -run XXX -bench . -benchtime 2s

// benchLock is a lock of the shape mcpform writes (indented, a tool's
// description and input schema, a digest per tool under digests), of
// servers servers of tools tools each: 20 of 10 is about 100 KB as
// written, 58 KB canonical (the payload).
func benchLock(tb testing.TB, servers, tools int) []byte {
	tb.Helper()
	digest := func(s string) string { return fmt.Sprintf("sha256:%064x", len(s)*7919) }
	all := map[string]any{}
	for s := range servers {
		name := fmt.Sprintf("server-%02d", s)
		var ts []any
		toolDigests := map[string]string{}
		for i := range tools {
			tool := fmt.Sprintf("tool_%02d", i)
			t := map[string]any{
				"name":        tool,
				"description": fmt.Sprintf("Does thing %d to a file", i),
				"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}},
			}
			if i%3 == 0 {
				t["annotations"] = map[string]any{"readOnlyHint": true}
			}
			ts = append(ts, t)
			toolDigests[tool] = digest(name + tool)
		}
		all[name] = map[string]any{
			"command":         []string{"npx", "-y", "@acme/" + name + "@1.2.3"},
			"envPassthrough":  []string{"HOME"},
			"protocolVersion": "2025-11-25",
			"serverInfo":      map[string]any{"name": name, "version": "1.2.3"},
			"capabilities":    map[string]any{"tools": map[string]any{"listChanged": true}},
			"tools":           ts,
			"resources":       []any{},
			"prompts":         []any{},
			"digests":         map[string]any{"surface": digest(name), "tools": toolDigests, "prompts": map[string]any{}, "resources": map[string]any{}},
			"policy": map[string]any{
				"sandbox": map[string]any{
					"filesystem": map[string]any{"read": []string{"${PROJECT}"}, "write": []string{"${TMP}"}},
					"network":    map[string]any{"allow": []string{"api.example.com:443"}},
				},
			},
			"mcpform": map[string]any{"configDigest": digest(name + "config")},
		}
	}
	data, err := json.MarshalIndent(map[string]any{"lockfileVersion": 3, "generator": "mcpform bench", "servers": all}, "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

func BenchmarkPayload(b *testing.B) {
	lock := benchLock(b, 20, 10)
	b.SetBytes(int64(len(lock)))
	for b.Loop() {
		if _, err := Payload(lock); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(lock)), "lock-bytes")
}

// BenchmarkCheckSSH: two ed25519 signatures by the two signers a policy
// requires.
func BenchmarkCheckSSH(b *testing.B) {
	payload, err := Payload(benchLock(b, 20, 10))
	if err != nil {
		b.Fatal(err)
	}
	var lines []string
	var sigs []Signature
	for _, name := range []string{"alice@example.com", "bob@example.com"} {
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			b.Fatal(err)
		}
		signer, err := ssh.NewSignerFromKey(priv)
		if err != nil {
			b.Fatal(err)
		}
		lines = append(lines, name+" "+strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey()))))
		s, err := SignSSH(payload, signer, name, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		sigs = append(sigs, s)
	}
	pol := policyFor(b, 2, lines...)
	f := &File{Version: FileVersion, Signatures: sigs}
	o := CheckOptions{Now: time.Now()}
	if r := Check(payload, f, pol, o); r.State != Valid {
		b.Fatalf("state %s: %+v", r.State, r.Findings)
	}
	b.SetBytes(int64(len(payload)))
	for b.Loop() {
		Check(payload, f, pol, o)
	}
}

// BenchmarkCheckSigstore: one keyless bundle (a certificate with an SCT, a
// Rekor entry with its promise and inclusion proof, an RFC 3161
// timestamp), against a trusted root read from its file as a trust
// file's trusted_root is.
func BenchmarkCheckSigstore(b *testing.B) {
	lock := benchLock(b, 20, 10)
	payload, err := Payload(lock)
	if err != nil {
		b.Fatal(err)
	}
	ts := sigstoretest.New(b)
	tr, err := root.NewTrustedRootFromJSON(ts.TrustedRootJSON(b))
	if err != nil {
		b.Fatal(err)
	}
	s, err := SigstoreSignature(ts.KeylessBundle(b, sigstoreSubject, sigstoreIssuer, payload), lock, tr, nil, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	pol := &Policy{Source: "trust.hcl", Required: 1, Revoked: map[string]bool{}, TrustedRoot: tr,
		Sigstore: []SigstoreIdentity{{Issuer: sigstoreIssuer, Subject: sigstoreSubject}}}
	f := &File{Version: FileVersion, Signatures: []Signature{s}}
	o := CheckOptions{Now: time.Now()}
	if r := Check(payload, f, pol, o); r.State != Valid {
		b.Fatalf("state %s: %+v", r.State, r.Findings)
	}
	b.SetBytes(int64(len(payload)))
	for b.Loop() {
		Check(payload, f, pol, o)
	}
}
