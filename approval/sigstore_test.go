package approval

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sigstore/sigstore-go/pkg/root"

	"github.com/mcpform/mcpform/internal/sigstoretest"
)

// The bundles these tests verify come from internal/sigstoretest's test
// Sigstore (sigstore-go's in-process Rekor and TSA, a Fulcio of its own
// that embeds SCTs), built field by field as cosign sign-blob --bundle
// writes them, so the code under test parses exactly what it parses from
// a real signer.

const (
	sigstoreIssuer  = "https://token.actions.githubusercontent.com"
	sigstoreSubject = "https://github.com/acme/mcp-config/.github/workflows/sign.yml@refs/heads/main"
)

// sigstoreLock is a small lock's JSON; n varies it.
func sigstoreLock(n int) []byte {
	return []byte(`{"version": 1, "servers": {"fs": {"command": ["npx", "server-` + strconv.Itoa(n) + `"], "policy": {"egress": []}}}}`)
}

func sigstorePayload(t testing.TB, lock []byte) ([]byte, []byte) {
	t.Helper()
	p, err := Payload(lock)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(p)
	return p, sum[:]
}

func wantSigstoreErr(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", want)
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q, want one containing %q", err, want)
	}
}

func TestSigstoreKeyless(t *testing.T) {
	ts := sigstoretest.New(t)
	payload, sum := sigstorePayload(t, sigstoreLock(1))
	for _, version := range []string{"v0.1", "v0.2", "v0.3"} {
		t.Run(version, func(t *testing.T) {
			b := ts.Keyless(t, sigstoreSubject, sigstoreIssuer, payload, sigstoretest.Opts{Version: version})
			s, err := verifySigstore(b.JSON(t), sum, ts, nil)
			if err != nil {
				t.Fatal(err)
			}
			if s != (SigstoreSigner{Issuer: sigstoreIssuer, Subject: sigstoreSubject}) {
				t.Fatalf("signer %+v", s)
			}
			exact := SigstoreIdentity{Issuer: sigstoreIssuer, Subject: sigstoreSubject}
			pattern := SigstoreIdentity{Issuer: sigstoreIssuer, SubjectRegex: regexp.MustCompile(`^https://github\.com/acme/[^/]+/\.github/workflows/sign\.yml@refs/heads/main$`)}
			if !exact.allows(s) || !pattern.allows(s) {
				t.Fatalf("the matching identities refuse %+v", s)
			}
		})
	}
	t.Run("email", func(t *testing.T) {
		b := ts.Keyless(t, "alice@example.com", "https://accounts.google.com", payload, sigstoretest.Opts{})
		s, err := verifySigstore(b.JSON(t), sum, ts, nil)
		if err != nil {
			t.Fatal(err)
		}
		if s != (SigstoreSigner{Issuer: "https://accounts.google.com", Subject: "alice@example.com"}) {
			t.Fatalf("signer %+v", s)
		}
	})
	t.Run("tlog only", func(t *testing.T) {
		b := ts.Keyless(t, sigstoreSubject, sigstoreIssuer, payload, sigstoretest.Opts{NoTSA: true})
		if _, err := verifySigstore(b.JSON(t), sum, ts, nil); err != nil {
			t.Fatal(err)
		}
	})
}

// A bundle by someone else verifies: it is the trust policy that refuses it.
func TestSigstoreIdentityMismatch(t *testing.T) {
	ts := sigstoretest.New(t)
	payload, sum := sigstorePayload(t, sigstoreLock(1))
	allowed := []SigstoreIdentity{
		{Issuer: sigstoreIssuer, Subject: sigstoreSubject},
		{Issuer: sigstoreIssuer, SubjectRegex: regexp.MustCompile(`^https://github\.com/acme/mcp-config/.*$`)},
	}
	for _, c := range []struct{ name, subject, issuer string }{
		{"other subject", "https://github.com/mallory/mcp-config/.github/workflows/sign.yml@refs/heads/main", sigstoreIssuer},
		{"other branch", "https://github.com/acme/mcp-config-fork/.github/workflows/sign.yml@refs/heads/main", sigstoreIssuer},
		{"wrong issuer", sigstoreSubject, "https://gitlab.com"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := ts.Keyless(t, c.subject, c.issuer, payload, sigstoretest.Opts{})
			s, err := verifySigstore(b.JSON(t), sum, ts, nil)
			if err != nil {
				t.Fatal(err)
			}
			if s != (SigstoreSigner{Issuer: c.issuer, Subject: c.subject}) {
				t.Fatalf("signer %+v", s)
			}
			for _, id := range allowed {
				if id.allows(s) {
					t.Fatalf("%+v allows %+v", id, s)
				}
			}
		})
	}
}

func TestSigstoreRefused(t *testing.T) {
	ts := sigstoretest.New(t)
	payload, sum := sigstorePayload(t, sigstoreLock(1))
	otherPayload, otherSum := sigstorePayload(t, sigstoreLock(2))
	good := func() *sigstoretest.Bundle {
		return ts.Keyless(t, sigstoreSubject, sigstoreIssuer, payload, sigstoretest.Opts{})
	}
	otherCA := ts.OtherFulcio(t)
	otherSigstore := sigstoretest.New(t)
	for _, c := range []struct {
		name   string
		bundle func() *sigstoretest.Bundle
		want   string
	}{
		{"inclusion proof hash", func() *sigstoretest.Bundle {
			b := good()
			b.VerificationMaterial.TlogEntries[0].InclusionProof.Hashes[0][0] ^= 1
			return b
		}, "does not match expected root"},
		{"inclusion proof root", func() *sigstoretest.Bundle {
			b := good()
			b.VerificationMaterial.TlogEntries[0].InclusionProof.RootHash[0] ^= 1
			return b
		}, "does not match expected root"},
		{"inclusion proof index", func() *sigstoretest.Bundle {
			b := good()
			b.VerificationMaterial.TlogEntries[0].InclusionProof.LogIndex = "1"
			return b
		}, "does not match expected root"},
		{"checkpoint", func() *sigstoretest.Bundle {
			b := good()
			cp := &b.VerificationMaterial.TlogEntries[0].InclusionProof.Checkpoint.Envelope
			*cp = strings.Replace(*cp, "\n42\n", "\n43\n", 1)
			return b
		}, "signature on checkpoint did not verify"},
		{"promise", func() *sigstoretest.Bundle {
			b := ts.Keyless(t, sigstoreSubject, sigstoreIssuer, payload, sigstoretest.Opts{Version: "v0.1"})
			b.VerificationMaterial.TlogEntries[0].InclusionProof = nil
			b.VerificationMaterial.TlogEntries[0].InclusionPromise.SignedEntryTimestamp[10] ^= 1
			return b
		}, "not enough verified log entries"},
		{"integrated time", func() *sigstoretest.Bundle {
			b := ts.Keyless(t, sigstoreSubject, sigstoreIssuer, payload, sigstoretest.Opts{Version: "v0.1"})
			b.VerificationMaterial.TlogEntries[0].InclusionProof = nil
			b.VerificationMaterial.TlogEntries[0].IntegratedTime = strconv.FormatInt(time.Now().Add(-time.Hour).Unix(), 10)
			return b
		}, "not enough verified log entries"},
		{"log entry of another signature", func() *sigstoretest.Bundle {
			b := good()
			b.VerificationMaterial.TlogEntries = ts.Keyless(t, sigstoreSubject, sigstoreIssuer, payload, sigstoretest.Opts{}).VerificationMaterial.TlogEntries
			return b
		}, "transparency log signature does not match"},
		{"no log entry", func() *sigstoretest.Bundle {
			return ts.Keyless(t, sigstoreSubject, sigstoreIssuer, payload, sigstoretest.Opts{NoTlog: true})
		}, "not enough verified log entries"},
		{"another Sigstore's log", func() *sigstoretest.Bundle {
			b := good()
			b.VerificationMaterial.TlogEntries = otherSigstore.Keyless(t, sigstoreSubject, sigstoreIssuer, payload, sigstoretest.Opts{}).VerificationMaterial.TlogEntries
			return b
		}, "not enough verified log entries"},
		{"another artefact", func() *sigstoretest.Bundle {
			return ts.Keyless(t, sigstoreSubject, sigstoreIssuer, otherPayload, sigstoretest.Opts{})
		}, "the bundle signs another artefact: its digest is sha256:" + hex.EncodeToString(otherSum)},
		{"another artefact's signature, this digest", func() *sigstoretest.Bundle {
			b := ts.Keyless(t, sigstoreSubject, sigstoreIssuer, otherPayload, sigstoretest.Opts{})
			b.MessageSignature.MessageDigest.Digest = sum
			return b
		}, "transparency log hashedrekord entry digest"},
		{"a logged signature over another artefact", func() *sigstoretest.Bundle {
			return ts.Keyless(t, sigstoreSubject, sigstoreIssuer, payload, sigstoretest.Opts{SignOver: otherPayload})
		}, "invalid signature when validating"},
		{"signature", func() *sigstoretest.Bundle {
			b := good()
			b.MessageSignature.Signature = sigstoretest.SignMessage(t, sigstoretest.NewP256Key(t), payload)
			return b
		}, "transparency log signature does not match"},
		{"another CA", func() *sigstoretest.Bundle {
			return otherCA.Keyless(t, sigstoreSubject, sigstoreIssuer, payload, sigstoretest.Opts{})
		}, "failed to verify leaf certificate"},
		{"another Sigstore", func() *sigstoretest.Bundle {
			return otherSigstore.Keyless(t, sigstoreSubject, sigstoreIssuer, payload, sigstoretest.Opts{})
		}, "not enough verified log entries"},
		{"no SCT", func() *sigstoretest.Bundle {
			return ts.Keyless(t, sigstoreSubject, sigstoreIssuer, payload, sigstoretest.Opts{NoSCT: true})
		}, "failed to verify signed certificate timestamp"},
		{"SHA-384 digest", func() *sigstoretest.Bundle {
			b := good()
			b.MessageSignature.MessageDigest.Algorithm = "SHA2_384"
			return b
		}, "the bundle signs a SHA2_384 digest"},
		{"no message signature", func() *sigstoretest.Bundle {
			b := good()
			b.MessageSignature = nil
			return b
		}, "not a Sigstore bundle"},
		{"DSSE envelope", func() *sigstoretest.Bundle {
			b := good()
			b.MessageSignature = nil
			b.DsseEnvelope = &sigstoretest.Envelope{Payload: []byte(`{"_type":"https://in-toto.io/Statement/v1"}`), PayloadType: "application/vnd.in-toto+json", Signatures: []sigstoretest.EnvelopeSignature{{Sig: []byte("sig")}}}
			return b
		}, "the bundle holds a DSSE envelope"},
		{"media type v0.4", func() *sigstoretest.Bundle {
			b := good()
			b.MediaType = "application/vnd.dev.sigstore.bundle.v0.4+json"
			return b
		}, "not a Sigstore bundle"},
		{"no verification material", func() *sigstoretest.Bundle {
			b := good()
			b.VerificationMaterial = sigstoretest.Material{}
			return b
		}, "not a Sigstore bundle"},
		{"v0.2 without inclusion proof", func() *sigstoretest.Bundle {
			b := ts.Keyless(t, sigstoreSubject, sigstoreIssuer, payload, sigstoretest.Opts{Version: "v0.2"})
			b.VerificationMaterial.TlogEntries[0].InclusionProof = nil
			return b
		}, "inclusion proof missing"},
		{"logged after the certificate expired", func() *sigstoretest.Bundle {
			return ts.Keyless(t, sigstoreSubject, sigstoreIssuer, payload, sigstoretest.Opts{NoTSA: true, LoggedAt: time.Now().Add(30 * time.Minute)})
		}, "integrated time outside certificate validity"},
		{"timestamped in time, logged after the certificate expired", func() *sigstoretest.Bundle {
			return ts.Keyless(t, sigstoreSubject, sigstoreIssuer, payload, sigstoretest.Opts{LoggedAt: time.Now().Add(30 * time.Minute)})
		}, "integrated time outside certificate validity"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := verifySigstore(c.bundle().JSON(t), sum, ts, nil)
			wantSigstoreErr(t, err, c.want)
			t.Log(err)
		})
	}
}

func TestSigstoreMalformed(t *testing.T) {
	ts := sigstoretest.New(t)
	payload, sum := sigstorePayload(t, sigstoreLock(1))
	good := ts.Keyless(t, sigstoreSubject, sigstoreIssuer, payload, sigstoretest.Opts{}).JSON(t)
	for _, c := range []struct {
		name   string
		bundle []byte
		want   string
	}{
		{"empty", nil, "the bundle is not valid JSON"},
		{"garbage", []byte("\x00\x01garbage"), "the bundle is not valid JSON"},
		{"truncated", good[:len(good)/2], "the bundle is not valid JSON"},
		{"a JSON string", []byte(`"bundle"`), "not a Sigstore bundle"},
		{"an empty object", []byte(`{}`), "not a Sigstore bundle"},
		{"duplicate key", append([]byte(`{"mediaType":"x",`), good[1:]...), "the bundle is not valid JSON"},
		{"unknown field", append([]byte(`{"unknownField":1,`), good[1:]...), "not a Sigstore bundle"},
		{"too large", append(bytes.Repeat([]byte(" "), maxBundle), good...), "larger than"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := verifySigstore(c.bundle, sum, ts, nil)
			wantSigstoreErr(t, err, c.want)
			if strings.ContainsAny(err.Error(), "\x00\x01") {
				t.Fatalf("the error prints the bundle's control characters: %q", err)
			}
		})
	}
	if _, err := verifySigstore(good, sum[:31], ts, nil); err == nil {
		t.Fatal("a short digest verifies")
	}
	if _, err := verifySigstore(good, sum, nil, nil); err == nil {
		t.Fatal("a bundle verifies without a trusted root")
	}
}

func keyIdentity(t testing.TB, key crypto.Signer) SigstoreIdentity {
	t.Helper()
	id, err := ParsePublicKey(sigstoretest.PublicKeyPEM(t, key.Public()))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestSigstoreKeyBased(t *testing.T) {
	ts := sigstoretest.New(t)
	payload, sum := sigstorePayload(t, sigstoreLock(1))
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	other := keyIdentity(t, sigstoretest.NewP256Key(t))
	for _, c := range []struct {
		name string
		key  crypto.Signer
		o    sigstoretest.Opts
	}{
		{"P-256", sigstoretest.NewP256Key(t), sigstoretest.Opts{}},
		{"P-384", p384, sigstoretest.Opts{}},
		{"RSA", rsaKey, sigstoretest.Opts{}},
		{"P-256 v0.1", sigstoretest.NewP256Key(t), sigstoretest.Opts{Version: "v0.1"}},
		{"timestamp only", sigstoretest.NewP256Key(t), sigstoretest.Opts{NoTlog: true}},
		{"log entry only", sigstoretest.NewP256Key(t), sigstoretest.Opts{NoTSA: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := keyIdentity(t, c.key)
			data := ts.Keyed(t, c.key, payload, c.o).JSON(t)
			// The key that verifies signs, whatever else the policy lists.
			for _, keys := range [][]SigstoreIdentity{{id}, {other, id}, {{Issuer: sigstoreIssuer, Subject: sigstoreSubject}, id}} {
				s, err := verifySigstore(data, sum, ts, keys)
				if err != nil {
					t.Fatal(err)
				}
				if s != (SigstoreSigner{Subject: "key:" + id.KeyID}) {
					t.Fatalf("signer %+v, want key:%s", s, id.KeyID)
				}
				if !id.allows(s) || other.allows(s) {
					t.Fatalf("allows: %v for its key, %v for another", id.allows(s), other.allows(s))
				}
			}
			_, err := verifySigstore(data, sum, ts, []SigstoreIdentity{other})
			wantSigstoreErr(t, err, "the bundle does not verify with public key "+other.KeyID)
			_, err = verifySigstore(data, sum, ts, []SigstoreIdentity{other, keyIdentity(t, sigstoretest.NewP256Key(t))})
			wantSigstoreErr(t, err, "the bundle does not verify with any of the trust policy's 2 public keys")
			_, err = verifySigstore(data, sum, ts, []SigstoreIdentity{{Issuer: sigstoreIssuer, Subject: sigstoreSubject}})
			wantSigstoreErr(t, err, "the trust policy names no sigstore public_key")
		})
	}
	key := sigstoretest.NewP256Key(t)
	id := keyIdentity(t, key)
	t.Run("no timestamp", func(t *testing.T) {
		_, err := verifySigstore(ts.Keyed(t, key, payload, sigstoretest.Opts{NoTlog: true, NoTSA: true}).JSON(t), sum, ts, []SigstoreIdentity{id})
		wantSigstoreErr(t, err, "threshold not met")
	})
	t.Run("bad inclusion proof", func(t *testing.T) {
		b := ts.Keyed(t, key, payload, sigstoretest.Opts{})
		b.VerificationMaterial.TlogEntries[0].InclusionProof.Hashes[0][3] ^= 1
		_, err := verifySigstore(b.JSON(t), sum, ts, []SigstoreIdentity{id})
		wantSigstoreErr(t, err, "failed to verify log inclusion")
	})
	t.Run("another artefact", func(t *testing.T) {
		other, _ := sigstorePayload(t, sigstoreLock(2))
		_, err := verifySigstore(ts.Keyed(t, key, other, sigstoretest.Opts{}).JSON(t), sum, ts, []SigstoreIdentity{id})
		wantSigstoreErr(t, err, "the bundle signs another artefact")
	})
	t.Run("a certificate's key", func(t *testing.T) {
		// A keyless bundle is not a key-based one because the policy
		// lists its key: it must chain to Fulcio.
		b := ts.Keyless(t, sigstoreSubject, sigstoreIssuer, payload, sigstoretest.Opts{})
		s, err := verifySigstore(b.JSON(t), sum, ts, []SigstoreIdentity{id})
		if err != nil || s.Issuer != sigstoreIssuer {
			t.Fatalf("%+v %v", s, err)
		}
	})
	t.Run("Ed25519", func(t *testing.T) {
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		_, err = verifySigstore(ts.Keyed(t, priv, payload, sigstoretest.Opts{NoTlog: true}).JSON(t), sum, ts, []SigstoreIdentity{keyIdentity(t, priv)})
		wantSigstoreErr(t, err, "is an Ed25519 key")
	})
}

// Bundles that sigstore's own tooling made (sigstore-go v1.3.0's
// pkg/testing/data, Apache-2.0), with the trusted roots they verify
// against: a keyless hashedrekord bundle from a scaffolding Sigstore
// deployment (Fulcio, Rekor and a CT log in a test cluster) and a
// key-based one with a TSA timestamp.
func TestSigstoreRealBundles(t *testing.T) {
	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join("testdata", "sigstore", name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	trustedRoot := func(name string) root.TrustedMaterial {
		tr, err := root.NewTrustedRootFromJSON(read(name))
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	t.Run("keyless", func(t *testing.T) {
		sum, _ := hex.DecodeString("bc103b4a84971ef6459b294a2b98568a2bfb72cded09d4acd1e16366a401f95b")
		tr := trustedRoot("scaffolding.json")
		s, err := verifySigstore(read("othername.sigstore.json"), sum, tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		if s != (SigstoreSigner{Issuer: "http://oidc.local:8080", Subject: "foo!oidc.local"}) {
			t.Fatalf("signer %+v", s)
		}
		other := sha256.Sum256([]byte("another artefact"))
		_, err = verifySigstore(read("othername.sigstore.json"), other[:], tr, nil)
		wantSigstoreErr(t, err, "the bundle signs another artefact")
	})
	t.Run("key-based", func(t *testing.T) {
		id, err := ParsePublicKey(read("public-key-validity.pem"))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte("test content"))
		tr := trustedRoot("public-key-validity.json")
		s, err := verifySigstore(read("public-key-validity.sigstore.json"), sum[:], tr, []SigstoreIdentity{id})
		if err != nil {
			t.Fatal(err)
		}
		if s != (SigstoreSigner{Subject: "key:" + id.KeyID}) {
			t.Fatalf("signer %+v", s)
		}
		var b struct {
			VerificationMaterial struct{ PublicKey struct{ Hint string } }
		}
		if err := json.Unmarshal(read("public-key-validity.sigstore.json"), &b); err != nil {
			t.Fatal(err)
		}
		if !hintNames(b.VerificationMaterial.PublicKey.Hint, id.PublicKey) {
			t.Fatalf("the hint %s does not name the key %s", b.VerificationMaterial.PublicKey.Hint, id.KeyID)
		}
		_, err = verifySigstore(read("public-key-validity.sigstore.json"), sum[:], tr, []SigstoreIdentity{keyIdentity(t, sigstoretest.NewP256Key(t))})
		wantSigstoreErr(t, err, "the bundle does not verify with public key")
	})
}

func TestSigstoreSignature(t *testing.T) {
	ts := sigstoretest.New(t)
	lock := sigstoreLock(1)
	payload, _ := sigstorePayload(t, lock)
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	t.Run("keyless", func(t *testing.T) {
		b := ts.Keyless(t, sigstoreSubject, sigstoreIssuer, payload, sigstoretest.Opts{})
		data := b.JSON(t)
		before := time.Now().Add(-time.Second).UTC().Truncate(time.Second)
		s, err := SigstoreSignature(data, lock, ts, nil, now)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.check(); err != nil {
			t.Fatal(err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, data); err != nil {
			t.Fatal(err)
		}
		integrated, _ := strconv.ParseInt(b.VerificationMaterial.TlogEntries[0].IntegratedTime, 10, 64)
		want := Signature{
			Kind:       KindSigstore,
			Signer:     sigstoreSubject,
			Key:        sigstoreIssuer,
			LockDigest: Digest(payload),
			SignedAt:   time.Unix(integrated, 0).UTC().Format(time.RFC3339),
			Bundle:     compact.Bytes(),
		}
		if s.Kind != want.Kind || s.Signer != want.Signer || s.Key != want.Key || s.LockDigest != want.LockDigest || s.SignedAt != want.SignedAt || !bytes.Equal(s.Bundle, want.Bundle) || s.SSHSig != "" {
			t.Fatalf("got %+v\nwant %+v", s, want)
		}
		at, err := time.Parse(time.RFC3339, s.SignedAt)
		if err != nil || at.Before(before) || !strings.HasSuffix(s.SignedAt, "Z") {
			t.Fatalf("signedAt %s", s.SignedAt)
		}
		// The entry verifies as Check verifies it, from the file's JSON.
		f, err := Parse(marshalSigFile(t, &File{Version: FileVersion, Signatures: []Signature{s}}))
		if err != nil {
			t.Fatal(err)
		}
		sig, err := verifySigstore(f.Signatures[0].Bundle, sum256(payload), ts, nil)
		if err != nil || sig.Subject != s.Signer || sig.Issuer != s.Key {
			t.Fatalf("%+v %v", sig, err)
		}
		// Indentation of the lock is not part of what is signed.
		var indented bytes.Buffer
		if err := json.Indent(&indented, lock, "", "\t"); err != nil {
			t.Fatal(err)
		}
		if _, err := SigstoreSignature(data, indented.Bytes(), ts, nil, now); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("key-based, timestamped", func(t *testing.T) {
		key := sigstoretest.NewP256Key(t)
		id := keyIdentity(t, key)
		s, err := SigstoreSignature(ts.Keyed(t, key, payload, sigstoretest.Opts{NoTlog: true}).JSON(t), lock, ts, []SigstoreIdentity{id}, now)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.check(); err != nil {
			t.Fatal(err)
		}
		if s.Signer != "key:"+id.KeyID || s.Key != "key:"+id.KeyID || s.LockDigest != Digest(payload) || s.SignedAt == now.Format(time.RFC3339) {
			t.Fatalf("%+v", s)
		}
	})
	t.Run("another lock", func(t *testing.T) {
		_, err := SigstoreSignature(ts.Keyless(t, sigstoreSubject, sigstoreIssuer, payload, sigstoretest.Opts{}).JSON(t), sigstoreLock(2), ts, nil, now)
		wantSigstoreErr(t, err, "the bundle signs another artefact")
	})
	t.Run("a lock that is not JSON", func(t *testing.T) {
		_, err := SigstoreSignature(ts.Keyless(t, sigstoreSubject, sigstoreIssuer, payload, sigstoretest.Opts{}).JSON(t), []byte("{"), ts, nil, now)
		wantSigstoreErr(t, err, "the lock is not valid JSON")
	})
	t.Run("a subject no signature file can name", func(t *testing.T) {
		_, err := SigstoreSignature(ts.Keyless(t, "https://example.com/"+strings.Repeat("a", 1024), sigstoreIssuer, payload, sigstoretest.Opts{}).JSON(t), lock, ts, nil, now)
		wantSigstoreErr(t, err, "is not 1 to 1024 printable characters")
	})
	t.Run("an issuer with control characters", func(t *testing.T) {
		_, err := SigstoreSignature(ts.Keyless(t, sigstoreSubject, "https://issuer.example\x1b[31m", payload, sigstoretest.Opts{}).JSON(t), lock, ts, nil, now)
		wantSigstoreErr(t, err, `OIDC issuer "https://issuer.example\u001b[31m" is not 1 to 1024 printable characters`)
	})
}

func marshalSigFile(t testing.TB, f *File) []byte {
	t.Helper()
	data, err := Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func sum256(b []byte) []byte {
	s := sha256.Sum256(b)
	return s[:]
}

func TestParsePublicKey(t *testing.T) {
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	edPub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rsa2048, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	for name, pub := range map[string]crypto.PublicKey{
		"P-256":   sigstoretest.NewP256Key(t).Public(),
		"P-384":   p384.Public(),
		"Ed25519": edPub,
		"RSA":     rsa2048.Public(),
	} {
		t.Run(name, func(t *testing.T) {
			id, err := ParsePublicKey(append([]byte("# cosign.pub\n"), sigstoretest.PublicKeyPEM(t, pub)...))
			if err != nil {
				t.Fatal(err)
			}
			der, _ := x509.MarshalPKIXPublicKey(pub)
			sum := sha256.Sum256(der)
			if id.KeyID != "SHA256:"+base64.RawStdEncoding.EncodeToString(sum[:]) || !fingerprintPattern.MatchString(id.KeyID) {
				t.Fatalf("key id %s", id.KeyID)
			}
			if !id.PublicKey.(interface{ Equal(crypto.PublicKey) bool }).Equal(pub) {
				t.Fatal("another key")
			}
			if id.Issuer != "" || id.Subject != "" || id.SubjectRegex != nil {
				t.Fatalf("%+v", id)
			}
		})
	}
	rsa1024, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	p224, err := ecdsa.GenerateKey(elliptic.P224(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecPriv, err := x509.MarshalECPrivateKey(sigstoretest.NewP256Key(t))
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(sigstoretest.NewP256Key(t))
	if err != nil {
		t.Fatal(err)
	}
	ts := sigstoretest.New(t)
	p256 := sigstoretest.PublicKeyPEM(t, sigstoretest.NewP256Key(t).Public())
	for _, c := range []struct {
		name string
		pem  []byte
		want string
	}{
		{"garbage", []byte("not a key\x00"), "not a PEM public key"},
		{"empty", nil, "not a PEM public key"},
		{"EC private key", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: ecPriv}), "not a public key"},
		{"PKCS #8 private key", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}), "not a public key"},
		{"cosign's encrypted private key", pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED SIGSTORE PRIVATE KEY", Bytes: []byte("x")}), "not a public key"},
		{"certificate", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.FulcioRoot().Raw}), `a PEM "CERTIFICATE" block`},
		{"RSA 1024", sigstoretest.PublicKeyPEM(t, rsa1024.Public()), "an RSA key of 1024 bits"},
		{"P-224", sigstoretest.PublicKeyPEM(t, p224.Public()), "an ECDSA key on P-224"},
		{"bad DER", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: []byte{0x30, 0x03, 0x02, 0x01}}), "not a PKIX public key"},
		{"two keys", append(slices.Clone(p256), p256...), "more than the one"},
		{"control characters in the type", pem.EncodeToMemory(&pem.Block{Type: "X\x1b[31m", Bytes: []byte("x")}), `a PEM "X\u001b[31m" block`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParsePublicKey(c.pem)
			wantSigstoreErr(t, err, c.want)
			if strings.ContainsRune(err.Error(), 0x1b) {
				t.Fatalf("the error prints a raw escape: %q", err)
			}
		})
	}
}

func FuzzVerifySigstore(f *testing.F) {
	ts := sigstoretest.New(f)
	payload, sum := sigstorePayload(f, sigstoreLock(1))
	key := sigstoretest.NewP256Key(f)
	keys := []SigstoreIdentity{keyIdentity(f, key)}
	for _, b := range [][]byte{
		ts.Keyless(f, sigstoreSubject, sigstoreIssuer, payload, sigstoretest.Opts{}).JSON(f),
		ts.Keyless(f, sigstoreSubject, sigstoreIssuer, payload, sigstoretest.Opts{Version: "v0.1"}).JSON(f),
		ts.Keyed(f, key, payload, sigstoretest.Opts{}).JSON(f),
	} {
		f.Add(b)
		var compact bytes.Buffer
		if err := json.Compact(&compact, b); err != nil {
			f.Fatal(err)
		}
		c := compact.Bytes()
		for _, n := range []int{0, 1, len(c) / 4, len(c) / 2, len(c) - 1} {
			f.Add(c[:n])
		}
	}
	for _, name := range []string{"othername.sigstore.json", "public-key-validity.sigstore.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", "sigstore", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := verifySigstore(data, sum, ts, keys)
		if err == nil && s.Subject == "" {
			t.Fatalf("verified without a signer: %+v", s)
		}
	})
}
