package approval

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/internal/strictjson"
)

// maxBundle bounds a Sigstore bundle: a real one (a certificate, a log
// entry with its proof, a timestamp) is a few kilobytes.
const maxBundle = 1 << 20

// minRSABits is the smallest RSA public key ParsePublicKey accepts.
const minRSABits = 2048

// A lock's Sigstore signature is a message signature over Payload(lock):
// what `cosign sign-blob --bundle FILE PAYLOAD` and sigstore-go's sign
// package make of the payload's bytes, a bundle whose messageSignature has
// the payload's SHA-256 as its digest. A DSSE envelope (`cosign
// attest-blob`, an in-toto statement whose subject has that digest) is
// refused: an attestation says whatever its predicate says about the
// artefact (it was built, scanned, tested), where a signature over the
// lock's own bytes can only mean the signer vouches for that lock.
//
// What must verify, with sigstore-go against the trusted root:
//   - keyless (a Fulcio certificate): the certificate chains to a Fulcio CA
//     of the trusted root at the time a trusted observer saw the signature,
//     it embeds an SCT of a CT log of the trusted root, the bundle has a
//     Rekor entry of a log of the trusted root whose inclusion (the entry's
//     signed promise and/or its inclusion proof against a signed
//     checkpoint) verifies, and the signature verifies with the
//     certificate's key over the payload's digest. Every time a trusted
//     observer vouches for (a log entry's integrated time, an RFC 3161
//     timestamp of a timestamping authority of the trusted root) must be
//     within the certificate's validity.
//   - key-based (a public key hint): the signature verifies with one of
//     the trust policy's public keys (the hint only says which to try
//     first; the key that verifies is the signer), and the bundle has at
//     least one trusted time: a Rekor entry (when it has entries, one
//     must verify, as above) or an RFC 3161 timestamp.
//
// A log entry of a log the trusted root knows must match the bundle's
// signature, key and digest, and its inclusion proof must verify; as in
// sigstore-go (and cosign), an entry of a log the trusted root does not
// know, an entry whose promise does not verify, or a timestamp no
// authority of the trusted root signed is not counted rather than
// refused, and the bundle verifies when what is counted suffices.
//
// Who signed is read from what verified, never from the signature file's
// fields: the certificate's OIDC issuer and SAN, or the key's fingerprint.
// Whether that signer counts is the trust policy's business
// (SigstoreIdentity.allows), not verifySigstore's.

// verifySigstore verifies a Sigstore bundle (protobuf-specs JSON, media
// types v0.1 to v0.3) as a message signature over the artefact whose
// SHA-256 is sum (the SHA-256 of Payload(lock)), against trusted, and
// returns who signed it: {Issuer: the certificate's OIDC issuer, Subject:
// its SAN} for a keyless bundle, {Issuer: "", Subject: "key:" + KeyID} for
// one signed with one of keys (the SigstoreIdentity values with PublicKey
// set; others are ignored). Every failure is an error that says what
// failed; untrusted text in it is escaped.
func verifySigstore(bundleJSON json.RawMessage, sum []byte, trusted root.TrustedMaterial, keys []SigstoreIdentity) (SigstoreSigner, error) {
	s, _, err := verifyBundle(bundleJSON, sum, trusted, keys)
	return s, err
}

// verifyBundle is verifySigstore, also returning when the signature was
// made: the earliest verified transparency log integrated time, else the
// earliest verified signed timestamp, else the zero time.
func verifyBundle(data []byte, sum []byte, trusted root.TrustedMaterial, keys []SigstoreIdentity) (SigstoreSigner, time.Time, error) {
	var none SigstoreSigner
	if len(sum) != sha256.Size {
		return none, time.Time{}, fmt.Errorf("the artefact's digest has %d bytes, not a SHA-256's %d", len(sum), sha256.Size)
	}
	if trusted == nil {
		return none, time.Time{}, errors.New("no Sigstore trusted root to verify the bundle with")
	}
	if len(data) > maxBundle {
		return none, time.Time{}, fmt.Errorf("the bundle is larger than %d bytes", maxBundle)
	}
	if err := strictjson.Check(data); err != nil {
		return none, time.Time{}, fmt.Errorf("the bundle is not valid JSON: %s", escape.String(err.Error()))
	}
	var b bundle.Bundle
	if err := b.UnmarshalJSON(data); err != nil {
		return none, time.Time{}, fmt.Errorf("the bundle is not a Sigstore bundle (protobuf-specs JSON, media type v0.1 to v0.3): %s", escape.String(err.Error()))
	}
	if b.GetDsseEnvelope() != nil {
		return none, time.Time{}, errors.New("the bundle holds a DSSE envelope (an attestation, as cosign attest-blob makes); a lock's approval is a message signature over its payload: cosign sign-blob --bundle FILE over the output of mcpform sign -payload")
	}
	md := b.GetMessageSignature().GetMessageDigest()
	if md == nil || len(b.GetMessageSignature().GetSignature()) == 0 {
		return none, time.Time{}, errors.New("the bundle holds no message signature with a digest")
	}
	if alg := md.GetAlgorithm().String(); alg != "SHA2_256" {
		return none, time.Time{}, fmt.Errorf("the bundle signs a %s digest; a lock's approval signs the payload's SHA2_256 digest", escape.String(alg))
	}
	if !bytes.Equal(md.GetDigest(), sum) {
		return none, time.Time{}, fmt.Errorf("the bundle signs another artefact: its digest is sha256:%s, the lock's payload is sha256:%x", hex.EncodeToString(md.GetDigest()), sum)
	}
	vc, err := b.VerificationContent()
	if err != nil {
		return none, time.Time{}, fmt.Errorf("the bundle's verification material: %s", escape.String(err.Error()))
	}
	artefact := verify.WithArtifactDigest("sha256", sum)
	switch {
	case vc.Certificate() != nil:
		v, err := verify.NewVerifier(trusted,
			verify.WithSignedCertificateTimestamps(1), verify.WithTransparencyLog(1), verify.WithObserverTimestamps(1))
		if err != nil {
			return none, time.Time{}, fmt.Errorf("the trusted root cannot verify bundles: %s", escape.String(err.Error()))
		}
		res, err := v.Verify(&b, verify.NewPolicy(artefact, verify.WithoutIdentitiesUnsafe()))
		if err != nil {
			return none, time.Time{}, fmt.Errorf("the bundle does not verify: %s", escape.String(err.Error()))
		}
		if res.Signature == nil || res.Signature.Certificate == nil {
			return none, time.Time{}, errors.New("the bundle verified without a certificate")
		}
		c := res.Signature.Certificate
		s := SigstoreSigner{Issuer: c.Issuer, Subject: c.SubjectAlternativeName}
		if err := checkSigner(s); err != nil {
			return none, time.Time{}, err
		}
		return s, signedAt(res), nil
	case vc.PublicKey() != nil:
		return verifyKeyBundle(&b, vc.PublicKey().Hint(), artefact, trusted, keys)
	}
	return none, time.Time{}, errors.New("the bundle has neither a certificate nor a public key")
}

// verifyKeyBundle verifies a key-based bundle with each of keys in turn,
// those whose fingerprint the bundle's hint names first.
// errUnlistedKey marks a key-based bundle by a key the trust policy does
// not list: it cannot be verified, and does not count, but it is not
// shown to be forged either (Check: not-allowed, not invalid).
var errUnlistedKey = errors.New("a key the trust policy does not list")

func verifyKeyBundle(b *bundle.Bundle, hint string, artefact verify.ArtifactPolicyOption, trusted root.TrustedMaterial, keys []SigstoreIdentity) (SigstoreSigner, time.Time, error) {
	var none SigstoreSigner
	var first, rest []SigstoreIdentity
	for _, k := range keys {
		switch {
		case k.PublicKey == nil:
		case hintNames(hint, k.PublicKey):
			first = append(first, k)
		default:
			rest = append(rest, k)
		}
	}
	try := append(first, rest...)
	if len(try) == 0 {
		return none, time.Time{}, unlisted{fmt.Errorf("the bundle is signed with a public key (hint %s), and the trust policy names no sigstore public_key to verify it with", quote(hint))}
	}
	opts := []verify.VerifierOption{verify.WithObserverTimestamps(1)}
	if len(b.GetVerificationMaterial().GetTlogEntries()) > 0 {
		opts = append(opts, verify.WithTransparencyLog(1))
	}
	var errs []string
	for _, k := range try {
		if _, ok := k.PublicKey.(ed25519.PublicKey); ok {
			errs = append(errs, k.KeyID+": it is an Ed25519 key, and sigstore-go verifies an Ed25519 message signature only over the artefact itself, not over its digest")
			continue
		}
		sv, err := signature.LoadVerifier(k.PublicKey, crypto.SHA256)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %s", k.KeyID, escape.String(err.Error())))
			continue
		}
		tm := &keyTrust{TrustedMaterial: trusted, key: root.NewExpiringKey(sv, time.Time{}, time.Time{})}
		v, err := verify.NewVerifier(tm, opts...)
		if err != nil {
			return none, time.Time{}, fmt.Errorf("the trusted root cannot verify bundles: %s", escape.String(err.Error()))
		}
		res, err := v.Verify(b, verify.NewPolicy(artefact, verify.WithKey()))
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %s", k.KeyID, escape.String(err.Error())))
			continue
		}
		return SigstoreSigner{Subject: "key:" + k.KeyID}, signedAt(res), nil
	}
	err := fmt.Errorf("the bundle does not verify with any of the trust policy's %d public keys: %s", len(try), strings.Join(errs, "; "))
	if len(try) == 1 {
		err = fmt.Errorf("the bundle does not verify with public key %s", errs[0])
	}
	if len(first) == 0 {
		// The hint names none of the policy's keys, and none verifies:
		// a key the policy does not list, as far as anyone can tell
		// without it.
		err = unlisted{err}
	}
	return none, time.Time{}, err
}

// unlisted is an error of a bundle by a key the trust policy does not
// list: its text as it is, and errors.Is(err, errUnlistedKey).
type unlisted struct{ error }

func (unlisted) Is(target error) bool { return target == errUnlistedKey }

// keyTrust is trusted material whose one public key is key, whatever the
// bundle's hint says.
type keyTrust struct {
	root.TrustedMaterial
	key root.TimeConstrainedVerifier
}

func (k *keyTrust) PublicKeyVerifier(string) (root.TimeConstrainedVerifier, error) {
	return k.key, nil
}

// hintNames reports whether a bundle's public key hint names pub: the
// base64 of the SHA-256 of its DER form, as sigstore-go and cosign write
// it, padded or not, or its hex.
func hintNames(hint string, pub crypto.PublicKey) bool {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil || hint == "" {
		return false
	}
	sum := sha256.Sum256(der)
	h := strings.TrimPrefix(hint, "SHA256:")
	return h == base64.StdEncoding.EncodeToString(sum[:]) || h == base64.RawStdEncoding.EncodeToString(sum[:]) || h == hex.EncodeToString(sum[:])
}

// signedAt is when a verified bundle was signed: the earliest log
// integrated time, else the earliest signed timestamp.
func signedAt(res *verify.VerificationResult) time.Time {
	var tlog, tsa time.Time
	for _, ts := range res.VerifiedTimestamps {
		p := &tsa
		if ts.Type == "Tlog" {
			p = &tlog
		}
		if p.IsZero() || ts.Timestamp.Before(*p) {
			*p = ts.Timestamp
		}
	}
	if !tlog.IsZero() {
		return tlog
	}
	return tsa
}

// checkSigner refuses a certificate identity a signature file cannot name.
func checkSigner(s SigstoreSigner) error {
	if s.Issuer == "" {
		return errors.New("the bundle's certificate names no OIDC issuer")
	}
	if s.Subject == "" {
		return errors.New("the bundle's certificate names no subject (SAN)")
	}
	if !printable(s.Issuer) || len(s.Issuer) > 1024 {
		return fmt.Errorf("the bundle's certificate's OIDC issuer %s is not 1 to 1024 printable characters", quote(s.Issuer))
	}
	if !printable(s.Subject) || len(s.Subject) > 1024 {
		return fmt.Errorf("the bundle's certificate's subject %s is not 1 to 1024 printable characters", quote(s.Subject))
	}
	return nil
}

// quote quotes untrusted text for a message, at most 200 bytes of it.
func quote(s string) string {
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return `"` + escape.String(s) + `"`
}

// SigstoreSignature makes the signature file entry for a bundle a signer
// made elsewhere over Payload(lockData): `cosign sign-blob --bundle FILE`
// of the output of `mcpform sign -payload`, or sigstore-go's sign package
// in CI. It verifies the bundle first, as Check will (verifySigstore), and
// fills the entry from what verified: Signer is the certificate's subject
// (or "key:" and the key's fingerprint), Key its OIDC issuer (or the same
// "key:…"), SignedAt the log's integrated time or the signed timestamp
// (now when the bundle has neither), Bundle the bundle as compact JSON.
func SigstoreSignature(bundleJSON []byte, lockData []byte, trusted root.TrustedMaterial, keys []SigstoreIdentity, now time.Time) (Signature, error) {
	payload, err := Payload(lockData)
	if err != nil {
		return Signature{}, err
	}
	sum := sha256.Sum256(payload)
	signer, at, err := verifyBundle(bundleJSON, sum[:], trusted, keys)
	if err != nil {
		return Signature{}, err
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, bundleJSON); err != nil {
		return Signature{}, fmt.Errorf("the bundle is not valid JSON: %w", err)
	}
	if at.IsZero() {
		at = now
	}
	s := Signature{
		Kind:       KindSigstore,
		Signer:     signer.Subject,
		Key:        signer.Issuer,
		LockDigest: Digest(payload),
		SignedAt:   at.UTC().Format(time.RFC3339),
		Bundle:     json.RawMessage(compact.Bytes()),
	}
	if signer.Issuer == "" {
		s.Key = signer.Subject
	}
	if err := s.check(); err != nil {
		return Signature{}, fmt.Errorf("the bundle makes no valid signature entry: %w", err)
	}
	return s, nil
}

// ParsePublicKey reads the PEM public key (a PKIX "PUBLIC KEY" block, as
// cosign generate-key-pair writes cosign.pub: ECDSA P-256 or P-384,
// Ed25519, or RSA of at least 2048 bits) a trust file's sigstore block
// names, and returns it as an identity: PublicKey, and KeyID "SHA256:" and
// the unpadded base64 of the SHA-256 of its DER form.
//
// A key-based bundle's signature is verified from the payload's digest,
// which sigstore-go cannot do for Ed25519: an Ed25519 key is read, but a
// bundle signed with it does not verify (the error says so).
func ParsePublicKey(pemData []byte) (SigstoreIdentity, error) {
	block, rest := pem.Decode(pemData)
	if block == nil {
		return SigstoreIdentity{}, errors.New("not a PEM public key (-----BEGIN PUBLIC KEY-----)")
	}
	if strings.Contains(block.Type, "PRIVATE KEY") {
		return SigstoreIdentity{}, fmt.Errorf("a %s, not a public key: name the public key (cosign.pub), and keep the private key out of the trust file", quote(block.Type))
	}
	if block.Type != "PUBLIC KEY" {
		return SigstoreIdentity{}, fmt.Errorf("a PEM %s block, not a PUBLIC KEY", quote(block.Type))
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return SigstoreIdentity{}, errors.New("more than the one PEM public key block")
	}
	pub, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return SigstoreIdentity{}, fmt.Errorf("the PEM block is not a PKIX public key: %s", escape.String(err.Error()))
	}
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		if k.Curve != elliptic.P256() && k.Curve != elliptic.P384() {
			return SigstoreIdentity{}, fmt.Errorf("an ECDSA key on %s; mcpform accepts P-256 and P-384", k.Curve.Params().Name)
		}
	case ed25519.PublicKey:
	case *rsa.PublicKey:
		if k.N.BitLen() < minRSABits {
			return SigstoreIdentity{}, fmt.Errorf("an RSA key of %d bits; mcpform accepts %d bits or more", k.N.BitLen(), minRSABits)
		}
	default:
		return SigstoreIdentity{}, fmt.Errorf("a %T public key; mcpform accepts ECDSA P-256 and P-384, Ed25519 and RSA", pub)
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return SigstoreIdentity{}, err
	}
	sum := sha256.Sum256(der)
	return SigstoreIdentity{PublicKey: pub, KeyID: "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:])}, nil
}
