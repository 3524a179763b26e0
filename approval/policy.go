package approval

import (
	"crypto"
	"regexp"
	"strings"

	"github.com/sigstore/sigstore-go/pkg/root"
)

// Policy is a trust policy: whose signatures count, and how many distinct
// signers a lock needs. It comes from a trust file (LoadPolicy), never
// from the repository the lock lives in.
type Policy struct {
	// Source is the trust file's path, for messages.
	Source string
	// Required is how many distinct allowed signers a lock needs (≥ 1).
	Required int
	// Signers are the allowed_signers file's lines.
	Signers []AllowedSigner
	// Sigstore are the identities whose Sigstore bundles count.
	Sigstore []SigstoreIdentity
	// Revoked holds the SHA256 fingerprints of revoked SSH keys and
	// Sigstore public keys: their signatures are invalid.
	Revoked map[string]bool
	// TrustedRoot verifies Sigstore bundles: the trust file's
	// trusted_root, or nil for the caller's default.
	TrustedRoot root.TrustedMaterial
}

// SigstoreIdentity is one sigstore block of a trust file: a keyless
// identity (an OIDC issuer and a certificate subject, exact or a pattern)
// or a public key a key-based bundle must be signed with.
type SigstoreIdentity struct {
	// Issuer is the OIDC issuer, exactly ("https://token.actions.githubusercontent.com").
	Issuer string
	// Subject is the certificate's subject (its SAN: a workflow URL, an
	// email), exactly; SubjectRegex a pattern it must match whole.
	Subject      string
	SubjectRegex *regexp.Regexp
	// PublicKey is the key of a key-based bundle, and KeyID its SHA256
	// fingerprint ("SHA256:…" of the key's DER form).
	PublicKey crypto.PublicKey
	KeyID     string
}

// SigstoreSigner is who a verified Sigstore bundle says signed it.
type SigstoreSigner struct {
	// Issuer is the certificate's OIDC issuer; "" for a key-based bundle.
	Issuer string
	// Subject is the certificate's subject (SAN), or for a key-based
	// bundle "key:" and the key's fingerprint.
	Subject string
}

// allows reports whether the identity admits the signer.
func (id SigstoreIdentity) allows(s SigstoreSigner) bool {
	if id.PublicKey != nil {
		return s.Issuer == "" && s.Subject == "key:"+id.KeyID
	}
	if s.Issuer != id.Issuer || s.Issuer == "" {
		return false
	}
	if id.SubjectRegex != nil {
		return id.SubjectRegex.MatchString(s.Subject)
	}
	return s.Subject == id.Subject
}

// TrustedMaterial is the trust file's Sigstore root; nil without a policy
// or without trusted_root (the caller's default then applies).
func (p *Policy) TrustedMaterial() root.TrustedMaterial {
	if p == nil {
		return nil
	}
	return p.TrustedRoot
}

// SigstoreKeys are the public keys key-based bundles may be signed with.
func (p *Policy) SigstoreKeys() []SigstoreIdentity {
	if p == nil {
		return nil
	}
	var out []SigstoreIdentity
	for _, id := range p.Sigstore {
		if id.PublicKey != nil {
			out = append(out, id)
		}
	}
	return out
}

// PrincipalOf is the name allowed_signers gives the key with fingerprint
// fp: the first plain principal (no pattern) of the first line listing
// it; "" when none does.
func (p *Policy) PrincipalOf(fp string) string {
	if p == nil {
		return ""
	}
	for _, s := range p.Signers {
		if s.Fingerprint != fp {
			continue
		}
		for _, name := range s.Principals {
			if !strings.ContainsAny(name, "*?!") {
				return name
			}
		}
	}
	return ""
}
