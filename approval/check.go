package approval

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/sigstore/sigstore-go/pkg/root"
	"golang.org/x/crypto/ssh"
)

// State is what the signatures over a lock amount to.
type State string

// The states the checking commands report.
const (
	// Valid: Required distinct allowed signers signed this exact lock.
	Valid State = "valid"
	// Invalid: a signature does not verify, is over another lock, or is
	// by a key that is revoked or out of its validity: tampering.
	Invalid State = "invalid"
	// Insufficient: every signature verifies, but fewer distinct allowed
	// signers signed than the trust policy requires.
	Insufficient State = "insufficient"
	// Unverified: signed, and every signature verifies, but no trust
	// policy says whose count. A warning, never a pass where a policy is
	// required.
	Unverified State = "unverified"
	// Unsigned: no signatures.
	Unsigned State = "unsigned"
)

// Status is what one signature amounts to.
type Status string

// The statuses of one signature.
const (
	// Approved: it verifies and the policy allows its signer; it counts.
	Approved Status = "approved"
	// Verified: it verifies; there is no policy to say whether it counts.
	Verified Status = "verified"
	// NotAllowed: it verifies, but the policy does not list its signer.
	NotAllowed Status = "not-allowed"
	// Duplicate: a signer (or key) already counted signed again.
	Duplicate Status = "duplicate"
	// Bad: it does not verify, or its key is revoked or out of its
	// validity.
	Bad Status = "invalid"
)

// Finding is one signature's outcome.
type Finding struct {
	// Index is the signature's position in the file, from 1.
	Index int
	// Signature is the entry as the file holds it (untrusted text).
	Signature Signature
	// Signer is who signed: the principal the policy confirmed for the
	// key, or the certificate's subject; the entry's claim when it could
	// not be confirmed.
	Signer string
	Status Status
	// Reason says why the signature does not count; "" when it does.
	Reason string
	// keyID is the approved signature's key, the same whichever form
	// (SSH or Sigstore) it signed in; "" unless it is Approved.
	keyID string
}

// Report is the outcome of Check.
type Report struct {
	State State
	// Digest is the lock's digest.
	Digest string
	// Required is the policy's requirement (0 without a policy).
	Required int
	// Approvers are the distinct signers that count, in file order.
	Approvers []string
	Findings  []Finding
	// Policy is the trust file's path ("" without one).
	Policy string
}

// Missing is how many more approvals the lock needs.
func (r *Report) Missing() int { return max(0, r.Required-len(r.Approvers)) }

// CheckOptions are what Check needs beside the lock and its signatures.
type CheckOptions struct {
	// Now is the time keys' validity is checked at.
	Now time.Time
	// TrustedRoot verifies Sigstore bundles when the policy names none
	// (Sigstore's public-good root, as the caller loads it).
	TrustedRoot root.TrustedMaterial
}

// Check checks the signatures in f over the lock whose Payload is payload
// against pol (nil: no trust policy here). Every signature is verified,
// with or without a policy: one that does not verify is tampering either
// way.
func Check(payload []byte, f *File, pol *Policy, o CheckOptions) *Report {
	r := &Report{State: Unsigned, Digest: Digest(payload)}
	if pol != nil {
		r.Required, r.Policy = pol.Required, pol.Source
	}
	if f == nil || len(f.Signatures) == 0 {
		return r
	}
	trusted := o.TrustedRoot
	if pol != nil && pol.TrustedRoot != nil {
		trusted = pol.TrustedRoot
	}
	sum := sha256.Sum256(payload)
	keysSeen, signersSeen := map[string]int{}, map[string]int{}
	invalid := false
	for i, s := range f.Signatures {
		fd := Finding{Index: i + 1, Signature: s, Signer: s.Signer}
		if s.LockDigest != r.Digest {
			fd.Status, fd.Reason = Bad, fmt.Sprintf("it is over another lock (%s), not this one (%s)", s.LockDigest, r.Digest)
		} else {
			switch s.Kind {
			case KindSSH:
				checkSSH(&fd, payload, pol, o.Now)
			case KindSigstore:
				checkSigstore(&fd, sum[:], pol, trusted)
			}
		}
		if fd.Status == Approved {
			// One key counts once, even listed both in allowed_signers
			// and as a sigstore public_key (a hardware key used for SSH
			// and cosign): its holder is one approver.
			keyID := fd.keyID
			if n, ok := keysSeen[keyID]; ok {
				fd.Status, fd.Reason = Duplicate, fmt.Sprintf("signature %d is by the same key", n)
			} else if n, ok := signersSeen[fd.Signer]; ok {
				fd.Status, fd.Reason = Duplicate, fmt.Sprintf("signature %d is by the same signer", n)
			} else {
				keysSeen[keyID], signersSeen[fd.Signer] = fd.Index, fd.Index
				r.Approvers = append(r.Approvers, fd.Signer)
			}
		}
		invalid = invalid || fd.Status == Bad
		r.Findings = append(r.Findings, fd)
	}
	switch {
	case invalid:
		r.State = Invalid
	case pol == nil:
		r.State = Unverified
	case len(r.Approvers) >= pol.Required:
		r.State = Valid
	default:
		r.State = Insufficient
	}
	return r
}

func checkSSH(fd *Finding, payload []byte, pol *Policy, now time.Time) {
	key, err := verifySSH(fd.Signature, payload)
	if err != nil {
		fd.Status, fd.Reason = Bad, err.Error()
		return
	}
	if pol == nil {
		fd.Status = Verified
		return
	}
	fp := ssh.FingerprintSHA256(key)
	if pol.Revoked[fp] {
		fd.Status, fd.Reason = Bad, fmt.Sprintf("key %s is revoked by %s", fp, pol.Source)
		return
	}
	var expired *AllowedSigner
	for i := range pol.Signers {
		line := &pol.Signers[i]
		if line.Fingerprint != fp || !line.admits(fd.Signature.Signer) {
			continue
		}
		if line.validAt(now) {
			fd.Status, fd.keyID = Approved, sshKeyID(key)
			return
		}
		expired = line
	}
	if expired != nil {
		fd.Status, fd.Reason = Bad, fmt.Sprintf("key %s is not valid at %s (allowed_signers line %d: %s)", fp, now.UTC().Format(time.RFC3339), expired.Line, validity(expired))
		return
	}
	fd.Status, fd.Reason = NotAllowed, fmt.Sprintf("allowed_signers does not list key %s for this signer in namespace %q", fp, Namespace)
}

func validity(s *AllowedSigner) string {
	var parts []string
	if !s.ValidAfter.IsZero() {
		parts = append(parts, "valid after "+s.ValidAfter.UTC().Format(time.RFC3339))
	}
	if !s.ValidBefore.IsZero() {
		parts = append(parts, "valid before "+s.ValidBefore.UTC().Format(time.RFC3339))
	}
	return strings.Join(parts, ", ")
}

func checkSigstore(fd *Finding, sum []byte, pol *Policy, trusted root.TrustedMaterial) {
	keys := pol.SigstoreKeys()
	if trusted == nil {
		fd.Status, fd.Reason = Bad, "no Sigstore trusted root to verify the bundle with"
		return
	}
	signer, err := verifySigstore(fd.Signature.Bundle, sum, trusted, keys)
	if errors.Is(err, errUnlistedKey) {
		fd.Status, fd.Reason = NotAllowed, err.Error()
		return
	}
	if err != nil {
		fd.Status, fd.Reason = Bad, err.Error()
		return
	}
	fd.Signer = signer.Subject
	if signer.Subject != fd.Signature.Signer || signer.Issuer != fd.Signature.Key && signer.Issuer != "" {
		fd.Status, fd.Reason = Bad, fmt.Sprintf("the bundle is by %s (issuer %s), not the signer the entry claims", escape.String(signer.Subject), escape.String(signer.Issuer))
		return
	}
	if pol == nil {
		fd.Status = Verified
		return
	}
	if strings.HasPrefix(signer.Subject, "key:") && pol.Revoked[strings.TrimPrefix(signer.Subject, "key:")] {
		fd.Status, fd.Reason = Bad, fmt.Sprintf("key %s is revoked by %s", strings.TrimPrefix(signer.Subject, "key:"), pol.Source)
		return
	}
	for _, id := range pol.Sigstore {
		if id.allows(signer) {
			fd.Status, fd.keyID = Approved, KindSigstore+" "+signer.Issuer+" "+signer.Subject
			if signer.Issuer == "" {
				fd.keyID = signer.Subject // "key:SHA256:…", as sshKeyID names an SSH key
			}
			return
		}
	}
	fd.Status, fd.Reason = NotAllowed, "no sigstore block of the trust file names this issuer and subject"
}

// sshKeyID names an SSH key as a key-based Sigstore signer is named
// ("key:" and ParsePublicKey's KeyID, the SHA-256 of the key's PKIX DER
// form), so that the same key is one signer in either form; a key with no
// PKIX form is named by its SSH fingerprint.
func sshKeyID(key ssh.PublicKey) string {
	if ck, ok := key.(ssh.CryptoPublicKey); ok {
		if der, err := x509.MarshalPKIXPublicKey(ck.CryptoPublicKey()); err == nil {
			sum := sha256.Sum256(der)
			return "key:SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:])
		}
	}
	return KindSSH + " " + ssh.FingerprintSHA256(key)
}
