package approval

import (
	"strings"
	"testing"
	"time"
)

// signers makes n ed25519 keys with ssh-keygen, named alice, bob, …
func signers(t *testing.T, n int) []testKey {
	t.Helper()
	dir := t.TempDir()
	var keys []testKey
	for _, name := range []string{"alice", "bob", "carol", "dave"}[:n] {
		keys = append(keys, newKey(t, dir, name, "ed25519"))
	}
	return keys
}

func sign(t *testing.T, k testKey, principal, lockData string) Signature {
	t.Helper()
	s, err := SignSSH(lockPayload(t, lockData), k.signer, principal, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func sigs(s ...Signature) *File { return &File{Version: FileVersion, Signatures: s} }

func TestCheckStates(t *testing.T) {
	k := signers(t, 3)
	pol := policyFor(t, 2,
		"alice@example.com "+k[0].line,
		"bob@example.com "+k[1].line)
	payload := lockPayload(t, lockJSON)
	alice, bob, carol := sign(t, k[0], "alice@example.com", lockJSON), sign(t, k[1], "bob@example.com", lockJSON), sign(t, k[2], "carol@example.com", lockJSON)
	now := CheckOptions{Now: time.Now()}

	cases := []struct {
		name      string
		file      *File
		pol       *Policy
		state     State
		approvers int
		reason    string
	}{
		{"two allowed signers", sigs(alice, bob), pol, Valid, 2, ""},
		{"one of two", sigs(alice), pol, Insufficient, 1, ""},
		{"a signer listed twice counts once", sigs(alice, alice), pol, Insufficient, 1, "signature 1 is by the same key"},
		{"a signer the policy does not list", sigs(alice, carol), pol, Insufficient, 1, "allowed_signers does not list key"},
		{"a signer claiming another's name", sigs(alice, sign(t, k[2], "bob@example.com", lockJSON)), pol, Insufficient, 1, "does not list key"},
		{"no policy", sigs(alice, carol), nil, Unverified, 0, ""},
		{"no signatures", sigs(), pol, Unsigned, 0, ""},
		{"no signatures, no policy", nil, nil, Unsigned, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Check(payload, c.file, c.pol, now)
			if r.State != c.state || len(r.Approvers) != c.approvers {
				t.Fatalf("state %s with approvers %v, want %s with %d; findings %+v", r.State, r.Approvers, c.state, c.approvers, r.Findings)
			}
			if c.reason != "" && !anyReason(r, c.reason) {
				t.Fatalf("no finding says %q: %+v", c.reason, r.Findings)
			}
		})
	}
}

func anyReason(r *Report, s string) bool {
	for _, f := range r.Findings {
		if strings.Contains(f.Reason, s) {
			return true
		}
	}
	return false
}

// TestCheckTampering: each way of forging an approval is invalid, with or
// without a policy.
func TestCheckTampering(t *testing.T) {
	k := signers(t, 2)
	pol := policyFor(t, 1, "alice@example.com "+k[0].line, "bob@example.com "+k[1].line)
	alice := sign(t, k[0], "alice@example.com", lockJSON)
	edited := strings.Replace(lockJSON, `"servers": {}`, `"servers": {} `, 1) // whitespace: same lock
	if r := Check(lockPayload(t, edited), sigs(alice), pol, CheckOptions{Now: time.Now()}); r.State != Valid {
		t.Fatalf("re-indenting the lock broke its signature: %+v", r.Findings)
	}
	oneByte := strings.Replace(lockJSON, "mcpform test", "mcpform tesT", 1)

	renamed := alice
	renamed.LockDigest = Digest(lockPayload(t, oneByte))

	otherKey := alice
	otherKey.Key = sign(t, k[1], "bob@example.com", lockJSON).Key

	swapped := alice
	swapped.SSHSig = sign(t, k[0], "alice@example.com", oneByte).SSHSig

	cases := []struct {
		name, lock string
		sig        Signature
		reason     string
	}{
		{"one byte of the lock changed", oneByte, alice, "over another lock"},
		{"the digest rewritten to the edited lock", oneByte, renamed, "does not verify"},
		{"a signature copied from another lock", lockJSON, swapped, "does not verify"},
		{"the key field rewritten", lockJSON, otherKey, "not the " + otherKey.Key + " it claims"},
	}
	for _, c := range cases {
		for _, p := range []*Policy{pol, nil} {
			r := Check(lockPayload(t, c.lock), sigs(c.sig), p, CheckOptions{Now: time.Now()})
			if r.State != Invalid || !anyReason(r, c.reason) {
				t.Errorf("%s (policy %v): state %s, findings %+v; want invalid with %q", c.name, p != nil, r.State, r.Findings, c.reason)
			}
		}
	}
}

// TestCheckKeyValidity: valid-before, valid-after, revocation and
// namespaces, from allowed_signers and the trust file.
func TestCheckKeyValidity(t *testing.T) {
	k := signers(t, 1)
	payload := lockPayload(t, lockJSON)
	alice := sign(t, k[0], "alice@example.com", lockJSON)
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name   string
		line   string
		state  State
		reason string
	}{
		{"inside its validity", `alice@example.com valid-after="20260101Z",valid-before="20270101Z" ` + k[0].line, Valid, ""},
		{"expired", `alice@example.com valid-before="20261201Z" ` + k[0].line, Invalid, "not valid at 2026-12-02T12:00:00Z"},
		{"not yet valid", `alice@example.com valid-after="202612030000Z" ` + k[0].line, Invalid, "valid after 2026-12-03T00:00:00Z"},
		{"another namespace", `alice@example.com namespaces="git,file" ` + k[0].line, Insufficient, "does not list key"},
		{"a pattern naming the signer", `*@example.com,!mallory@example.com ` + k[0].line, Valid, ""},
		{"a negated pattern", `*@example.com,!alice@example.com ` + k[0].line, Insufficient, "does not list key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Check(payload, sigs(alice), policyFor(t, 1, c.line), CheckOptions{Now: now})
			if r.State != c.state || c.reason != "" && !anyReason(r, c.reason) {
				t.Fatalf("state %s, findings %+v; want %s with %q", r.State, r.Findings, c.state, c.reason)
			}
		})
	}
	revoking := policyFor(t, 1, "alice@example.com "+k[0].line)
	revoking.Revoked[alice.Key] = true
	if r := Check(payload, sigs(alice), revoking, CheckOptions{Now: now}); r.State != Invalid || !anyReason(r, "revoked") {
		t.Fatalf("a revoked key: state %s, findings %+v", r.State, r.Findings)
	}
}

// TestCheckOneSignerTwoKeys: a person with two keys is one approver.
func TestCheckOneSignerTwoKeys(t *testing.T) {
	k := signers(t, 2)
	pol := policyFor(t, 2, "alice@example.com "+k[0].line, "alice@example.com "+k[1].line)
	r := Check(lockPayload(t, lockJSON), sigs(sign(t, k[0], "alice@example.com", lockJSON), sign(t, k[1], "alice@example.com", lockJSON)), pol, CheckOptions{Now: time.Now()})
	if r.State != Insufficient || r.Missing() != 1 || !anyReason(r, "same signer") {
		t.Fatalf("state %s, missing %d, findings %+v", r.State, r.Missing(), r.Findings)
	}
}
