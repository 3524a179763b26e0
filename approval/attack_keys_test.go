package approval

import (
	"crypto/ecdsa"
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/mcpform/mcpform/internal/sigstoretest"
)

// TestAttackOneKeyTwoKinds: one ECDSA P-256 key (a hardware key used
// for both SSH and cosign, say) listed in allowed_signers and as a
// sigstore public_key counted as two distinct approvals: its holder
// alone met required = 2, with an SSH signature and a key-based bundle
// over the same lock. It counts once, whichever form signs, and the
// trust file's bound on what it could possibly meet counts it once too.
// The control: two people's keys, one of each kind, make two approvals.
func TestAttackOneKeyTwoKinds(t *testing.T) {
	ts := sigstoretest.New(t)
	lockData := []byte(lockJSON)
	payload, _ := sigstorePayload(t, lockData)
	alice := sigstoretest.NewP256Key(t)
	bob := sigstoretest.NewP256Key(t)

	sshSig := func(t *testing.T, k any) Signature {
		t.Helper()
		signer, err := ssh.NewSignerFromKey(k)
		if err != nil {
			t.Fatal(err)
		}
		s, err := SignSSH(payload, signer, "alice@example.com", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	sshLine := func(t *testing.T, k any) string {
		t.Helper()
		signer, err := ssh.NewSignerFromKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return "alice@example.com " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey())))
	}
	build := func(t *testing.T, sshKey, bundleKey *ecdsa.PrivateKey) (*Policy, *File) {
		t.Helper()
		pol := policyFor(t, 2, sshLine(t, sshKey))
		pol.Sigstore = []SigstoreIdentity{keyIdentity(t, bundleKey)}
		b, err := SigstoreSignature(ts.KeyBundle(t, bundleKey, payload), lockData, ts, pol.SigstoreKeys(), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return pol, sigs(sshSig(t, sshKey), b)
	}

	// Control: alice's SSH key and bob's cosign key are two approvals.
	pol, f := build(t, alice, bob)
	if r := Check(payload, f, pol, CheckOptions{Now: time.Now(), TrustedRoot: ts}); r.State != Valid || len(r.Approvers) != 2 {
		t.Fatalf("control: two keys of two kinds: state %s, approvers %q, findings %q", r.State, r.Approvers, outcomes(r))
	}

	// The attack: alice's one key, signing in both forms.
	pol, f = build(t, alice, alice)
	r := Check(payload, f, pol, CheckOptions{Now: time.Now(), TrustedRoot: ts})
	if r.State != Insufficient || len(r.Approvers) != 1 || !anyReason(r, "same key") {
		t.Errorf("one key as an SSH key and a sigstore public_key: state %s, approvers %q, findings %q; want insufficient, one approver, the second signature by the same key", r.State, r.Approvers, outcomes(r))
	}
	if n, bounded := pol.possibleSigners(); !bounded || n != 1 {
		t.Errorf("possibleSigners of a trust file listing one key twice: %d (bounded %v), want 1", n, bounded)
	}
}

// outcomes is each finding's status and reason, for a failure message.
func outcomes(r *Report) []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, fmt.Sprintf("%d %s %s", f.Index, f.Status, f.Reason))
	}
	return out
}
