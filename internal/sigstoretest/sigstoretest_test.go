package sigstoretest

import (
	"crypto"
	"crypto/sha256"
	"testing"
	"time"

	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/signature"
)

// The trusted root file is the same trust as the in-memory material: a
// keyless bundle verifies against both with every check a keyless
// approval makes (SCT, log entry, a trusted time), and against another
// test Sigstore's root it does not.
func TestTrustedRootJSON(t *testing.T) {
	ts := New(t)
	artefact := []byte("a lock's payload")
	data := ts.KeylessBundle(t, "https://github.com/acme/x/.github/workflows/sign.yml@refs/heads/main", "https://token.actions.githubusercontent.com", artefact)
	var b bundle.Bundle
	if err := b.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	fromJSON, err := root.NewTrustedRootFromJSON(ts.TrustedRootJSON(t))
	if err != nil {
		t.Fatal(err)
	}
	other, err := root.NewTrustedRootFromJSON(New(t).TrustedRootJSON(t))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(artefact)
	policy := verify.NewPolicy(verify.WithArtifactDigest("sha256", sum[:]), verify.WithoutIdentitiesUnsafe())
	check := func(tm root.TrustedMaterial) error {
		v, err := verify.NewVerifier(tm, verify.WithSignedCertificateTimestamps(1), verify.WithTransparencyLog(1), verify.WithObserverTimestamps(1))
		if err != nil {
			t.Fatal(err)
		}
		res, err := v.Verify(&b, policy)
		if err == nil && res.Signature.Certificate.SubjectAlternativeName != "https://github.com/acme/x/.github/workflows/sign.yml@refs/heads/main" {
			t.Fatalf("signer %+v", res.Signature.Certificate)
		}
		return err
	}
	for name, tm := range map[string]root.TrustedMaterial{"in memory": ts, "from JSON": fromJSON} {
		if err := check(tm); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := check(other); err == nil {
		t.Error("the bundle verifies against another test Sigstore's root")
	}
}

// A key-based bundle verifies against the root file with its key.
func TestKeyBundle(t *testing.T) {
	ts := New(t)
	key := NewP256Key(t)
	artefact := []byte("a lock's payload")
	var b bundle.Bundle
	if err := b.UnmarshalJSON(ts.KeyBundle(t, key, artefact)); err != nil {
		t.Fatal(err)
	}
	tr, err := root.NewTrustedRootFromJSON(ts.TrustedRootJSON(t))
	if err != nil {
		t.Fatal(err)
	}
	sv, err := signature.LoadVerifier(key.Public(), crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	v, err := verify.NewVerifier(&keyed{tr, root.NewExpiringKey(sv, time.Time{}, time.Time{})}, verify.WithTransparencyLog(1), verify.WithObserverTimestamps(1))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(artefact)
	if _, err := v.Verify(&b, verify.NewPolicy(verify.WithArtifactDigest("sha256", sum[:]), verify.WithKey())); err != nil {
		t.Fatal(err)
	}
}

type keyed struct {
	root.TrustedMaterial
	key root.TimeConstrainedVerifier
}

func (k *keyed) PublicKeyVerifier(string) (root.TimeConstrainedVerifier, error) { return k.key, nil }
