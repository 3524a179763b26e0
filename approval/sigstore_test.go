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
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gowebpki/jcs"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore-go/pkg/tlog"
)

// The test Sigstore is sigstore-go's in-process one (ca.VirtualSigstore:
// its Rekor signs the entries' promises and checkpoints, its TSA the RFC
// 3161 timestamps) with a Fulcio of its own in front: VirtualSigstore's
// certificates carry no SCT, and verifySigstore requires one, so the test
// Fulcio issues certificates with an SCT embedded, signed by a CT log key
// the trusted material lists. What the tests verify is bundle JSON, built
// field by field as cosign sign-blob --bundle writes it, so the code under
// test parses exactly what it parses from a real signer.

const (
	sigstoreIssuer  = "https://token.actions.githubusercontent.com"
	sigstoreSubject = "https://github.com/acme/mcp-config/.github/workflows/sign.yml@refs/heads/main"
)

type testSigstore struct {
	*ca.VirtualSigstore
	fulcio    *root.FulcioCertificateAuthority
	fulcioKey *ecdsa.PrivateKey
	ctKey     *ecdsa.PrivateKey
}

func newTestSigstore(t testing.TB) *testSigstore {
	t.Helper()
	vs, err := ca.NewVirtualSigstoreWithExistingRekorEntry()
	if err != nil {
		t.Fatal(err)
	}
	return newTestFulcio(t, vs)
}

// newTestFulcio is a test Sigstore with vs's Rekor, TSA and CT log but a
// Fulcio CA of its own.
func newTestFulcio(t testing.TB, vs *ca.VirtualSigstore) *testSigstore {
	t.Helper()
	rootCert, rootKey, err := ca.GenerateRootCa()
	if err != nil {
		t.Fatal(err)
	}
	inter, interKey, err := ca.GenerateFulcioIntermediate(rootCert, rootKey)
	if err != nil {
		t.Fatal(err)
	}
	ctKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &testSigstore{
		VirtualSigstore: vs,
		fulcio: &root.FulcioCertificateAuthority{
			Root:                rootCert,
			Intermediates:       []*x509.Certificate{inter},
			ValidityPeriodStart: time.Now().Add(-time.Hour),
			ValidityPeriodEnd:   time.Now().Add(time.Hour),
			URI:                 "https://fulcio.test",
		},
		fulcioKey: interKey,
		ctKey:     ctKey,
	}
}

func (ts *testSigstore) FulcioCertificateAuthorities() []root.CertificateAuthority {
	return []root.CertificateAuthority{ts.fulcio}
}

func (ts *testSigstore) CTLogs() map[string]*root.TransparencyLog {
	der, err := x509.MarshalPKIXPublicKey(ts.ctKey.Public())
	if err != nil {
		panic(err)
	}
	id := sha256.Sum256(der)
	return map[string]*root.TransparencyLog{hex.EncodeToString(id[:]): {
		BaseURL:             "https://ctlog.test",
		ID:                  id[:],
		ValidityPeriodStart: time.Now().Add(-time.Hour),
		ValidityPeriodEnd:   time.Now().Add(time.Hour),
		HashFunc:            crypto.SHA256,
		PublicKey:           ts.ctKey.Public(),
	}}
}

// leaf issues a Fulcio certificate for subject (a URI or an email) and
// issuer, with an SCT embedded unless noSCT.
func (ts *testSigstore) leaf(t testing.TB, subject, issuer string, pub crypto.PublicKey, noSCT bool) *x509.Certificate {
	t.Helper()
	issuerV2, err := asn1.MarshalWithParams(issuer, "utf8")
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(10 * time.Minute),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning},
		ExtraExtensions: []pkix.Extension{
			{Id: asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 1}, Value: []byte(issuer)},
			{Id: asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 8}, Value: issuerV2},
		},
	}
	if u, err := url.Parse(subject); err == nil && u.Scheme != "" {
		tmpl.URIs = []*url.URL{u}
	} else {
		tmpl.EmailAddresses = []string{subject}
	}
	inter := ts.fulcio.Intermediates[0]
	create := func(tmpl *x509.Certificate) *x509.Certificate {
		der, err := x509.CreateCertificate(rand.Reader, tmpl, inter, pub, ts.fulcioKey)
		if err != nil {
			t.Fatal(err)
		}
		c, err := x509.ParseCertificate(der)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	pre := create(tmpl)
	if noSCT {
		return pre
	}
	// RFC 6962 §3.2: the SCT signs the certificate's TBS without the SCT
	// list extension (the precertificate's TBS) and the issuer's key hash.
	tbs := pre.RawTBSCertificate
	keyHash := sha256.Sum256(inter.RawSubjectPublicKeyInfo)
	when := uint64(time.Now().UnixMilli())
	in := []byte{0, 0} // v1, certificate_timestamp
	in = binary.BigEndian.AppendUint64(in, when)
	in = binary.BigEndian.AppendUint16(in, 1) // precert_entry
	in = append(in, keyHash[:]...)
	in = append(in, byte(len(tbs)>>16), byte(len(tbs)>>8), byte(len(tbs)))
	in = append(in, tbs...)
	in = binary.BigEndian.AppendUint16(in, 0) // no extensions
	d := sha256.Sum256(in)
	sig, err := ecdsa.SignASN1(rand.Reader, ts.ctKey, d[:])
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(ts.ctKey.Public())
	if err != nil {
		t.Fatal(err)
	}
	logID := sha256.Sum256(der)
	sct := append([]byte{0}, logID[:]...)
	sct = binary.BigEndian.AppendUint64(sct, when)
	sct = binary.BigEndian.AppendUint16(sct, 0)
	sct = append(sct, 4, 3) // sha256, ecdsa
	sct = binary.BigEndian.AppendUint16(sct, uint16(len(sig)))
	sct = append(sct, sig...)
	list := binary.BigEndian.AppendUint16(nil, uint16(len(sct)+2))
	list = binary.BigEndian.AppendUint16(list, uint16(len(sct)))
	list = append(list, sct...)
	val, err := asn1.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	final := *tmpl
	final.ExtraExtensions = append(slices.Clone(tmpl.ExtraExtensions), pkix.Extension{Id: asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 11129, 2, 4, 2}, Value: val})
	return create(&final)
}

// The bundle's JSON, as protobuf-specs' protojson mapping writes it
// (int64 as strings, bytes as base64).
type tBundle struct {
	MediaType            string     `json:"mediaType"`
	VerificationMaterial tMaterial  `json:"verificationMaterial"`
	MessageSignature     *tMessage  `json:"messageSignature,omitempty"`
	DsseEnvelope         *tEnvelope `json:"dsseEnvelope,omitempty"`
}

type tMaterial struct {
	Certificate               *tRaw    `json:"certificate,omitempty"`
	X509CertificateChain      *tChain  `json:"x509CertificateChain,omitempty"`
	PublicKey                 *tHint   `json:"publicKey,omitempty"`
	TlogEntries               []tEntry `json:"tlogEntries,omitempty"`
	TimestampVerificationData *tTSData `json:"timestampVerificationData,omitempty"`
}

type tRaw struct {
	RawBytes []byte `json:"rawBytes"`
}

type tChain struct {
	Certificates []tRaw `json:"certificates"`
}

type tHint struct {
	Hint string `json:"hint"`
}

type tEntry struct {
	LogIndex          string    `json:"logIndex"`
	LogID             tKeyID    `json:"logId"`
	KindVersion       tKind     `json:"kindVersion"`
	IntegratedTime    string    `json:"integratedTime"`
	InclusionPromise  *tPromise `json:"inclusionPromise,omitempty"`
	InclusionProof    *tProof   `json:"inclusionProof,omitempty"`
	CanonicalizedBody []byte    `json:"canonicalizedBody"`
}

type tKeyID struct {
	KeyID []byte `json:"keyId"`
}

type tKind struct {
	Kind    string `json:"kind"`
	Version string `json:"version"`
}

type tPromise struct {
	SignedEntryTimestamp []byte `json:"signedEntryTimestamp"`
}

type tProof struct {
	LogIndex   string      `json:"logIndex"`
	RootHash   []byte      `json:"rootHash"`
	TreeSize   string      `json:"treeSize"`
	Hashes     [][]byte    `json:"hashes"`
	Checkpoint tCheckpoint `json:"checkpoint"`
}

type tCheckpoint struct {
	Envelope string `json:"envelope"`
}

type tTSData struct {
	Rfc3161Timestamps []tTS `json:"rfc3161Timestamps"`
}

type tTS struct {
	SignedTimestamp []byte `json:"signedTimestamp"`
}

type tMessage struct {
	MessageDigest tDigest `json:"messageDigest"`
	Signature     []byte  `json:"signature"`
}

type tDigest struct {
	Algorithm string `json:"algorithm"`
	Digest    []byte `json:"digest"`
}

type tEnvelope struct {
	Payload     []byte  `json:"payload"`
	PayloadType string  `json:"payloadType"`
	Signatures  []tDSig `json:"signatures"`
}

type tDSig struct {
	Sig []byte `json:"sig"`
}

func (b *tBundle) json(t testing.TB) []byte {
	t.Helper()
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

var bundleMediaTypes = map[string]string{
	"v0.1": "application/vnd.dev.sigstore.bundle+json;version=0.1",
	"v0.2": "application/vnd.dev.sigstore.bundle+json;version=0.2",
	"v0.3": "application/vnd.dev.sigstore.bundle.v0.3+json",
}

type bundleOpts struct {
	version string // v0.1 to v0.3; v0.3 when ""
	noTlog  bool   // no Rekor entry
	noTSA   bool   // no RFC 3161 timestamp
	noSCT   bool   // a certificate without an SCT
	// signOver is what the signature signs, when not the artefact the
	// bundle's digest and log entry name.
	signOver []byte
	// loggedAt is the log entry's integrated time; now when zero.
	loggedAt time.Time
}

// signMessage signs artefact's SHA-256 with key the way sigstore's
// clients do: ECDSA (ASN.1) or RSA PKCS #1 v1.5 over the digest, Ed25519
// over the artefact.
func signMessage(t testing.TB, key crypto.Signer, artefact []byte) []byte {
	t.Helper()
	sum := sha256.Sum256(artefact)
	var sig []byte
	var err error
	switch k := key.(type) {
	case ed25519.PrivateKey:
		sig = ed25519.Sign(k, artefact)
	default:
		sig, err = key.Sign(rand.Reader, sum[:], crypto.SHA256)
	}
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

// keyless is a bundle a CI job's cosign sign-blob would make over
// artefact: a Fulcio certificate for subject and issuer, a hashedrekord
// entry with its promise and inclusion proof, an RFC 3161 timestamp.
func (ts *testSigstore) keyless(t testing.TB, subject, issuer string, artefact []byte, o bundleOpts) *tBundle {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	cert := ts.leaf(t, subject, issuer, key.Public(), o.noSCT)
	sig := signMessage(t, key, artefact)
	if o.signOver != nil {
		sig = signMessage(t, key, o.signOver)
	}
	b := ts.bundle(t, artefact, sig, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}), o)
	if b.MediaType == bundleMediaTypes["v0.3"] {
		b.VerificationMaterial.Certificate = &tRaw{cert.Raw}
	} else {
		b.VerificationMaterial.X509CertificateChain = &tChain{[]tRaw{{cert.Raw}}}
	}
	return b
}

// keyed is a bundle cosign sign-blob --key would make over artefact.
func (ts *testSigstore) keyed(t testing.TB, key crypto.Signer, artefact []byte, o bundleOpts) *tBundle {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		t.Fatal(err)
	}
	sig := signMessage(t, key, artefact)
	b := ts.bundle(t, artefact, sig, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), o)
	hint := sha256.Sum256(der)
	b.VerificationMaterial.PublicKey = &tHint{base64.StdEncoding.EncodeToString(hint[:])}
	return b
}

// bundle is the bundle of a message signature sig over artefact by the
// holder of verifier (a PEM certificate or public key), its verification
// material but the certificate or key hint.
func (ts *testSigstore) bundle(t testing.TB, artefact, sig, verifier []byte, o bundleOpts) *tBundle {
	t.Helper()
	if o.version == "" {
		o.version = "v0.3"
	}
	sum := sha256.Sum256(artefact)
	b := &tBundle{
		MediaType: bundleMediaTypes[o.version],
		MessageSignature: &tMessage{
			MessageDigest: tDigest{Algorithm: "SHA2_256", Digest: sum[:]},
			Signature:     sig,
		},
	}
	if !o.noTlog {
		b.VerificationMaterial.TlogEntries = []tEntry{ts.entry(t, sum[:], sig, verifier, o.loggedAt)}
	}
	if !o.noTSA {
		tsr, err := ts.TimestampResponse(sig)
		if err != nil {
			t.Fatal(err)
		}
		b.VerificationMaterial.TimestampVerificationData = &tTSData{[]tTS{{tsr}}}
	}
	return b
}

// entry is the test Rekor's hashedrekord entry for a signature over sum.
func (ts *testSigstore) entry(t testing.TB, sum, sig, verifier []byte, at time.Time) tEntry {
	t.Helper()
	raw, err := json.Marshal(map[string]any{
		"apiVersion": "0.0.1",
		"kind":       "hashedrekord",
		"spec": map[string]any{
			"data": map[string]any{"hash": map[string]any{"algorithm": "sha256", "value": hex.EncodeToString(sum)}},
			"signature": map[string]any{
				"content":   base64.StdEncoding.EncodeToString(sig),
				"publicKey": map[string]any{"content": base64.StdEncoding.EncodeToString(verifier)},
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	body, err := jcs.Transform(raw)
	if err != nil {
		t.Fatal(err)
	}
	logIDHex, err := ts.RekorLogID()
	if err != nil {
		t.Fatal(err)
	}
	logID, err := hex.DecodeString(logIDHex)
	if err != nil {
		t.Fatal(err)
	}
	proof, err := ts.GetInclusionProof(body)
	if err != nil {
		t.Fatal(err)
	}
	// The test Rekor's tree has two leaves, the entry and the one before
	// it (NewVirtualSigstoreWithExistingRekorEntry), and the proof's
	// hashes are those of the entry as the first leaf: its index is 0
	// (the proof it returns says 1).
	idx := int64(0)
	if at.IsZero() {
		at = time.Now()
	}
	integrated := at.Unix()
	set, err := ts.RekorSignPayload(tlog.RekorPayload{
		Body:           base64.StdEncoding.EncodeToString(body),
		IntegratedTime: integrated,
		LogIndex:       idx,
		LogID:          logIDHex,
	})
	if err != nil {
		t.Fatal(err)
	}
	rootHash, err := hex.DecodeString(*proof.RootHash)
	if err != nil {
		t.Fatal(err)
	}
	hashes := [][]byte{}
	for _, h := range proof.Hashes {
		d, err := hex.DecodeString(h)
		if err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, d)
	}
	return tEntry{
		LogIndex:         strconv.FormatInt(idx, 10),
		LogID:            tKeyID{logID},
		KindVersion:      tKind{"hashedrekord", "0.0.1"},
		IntegratedTime:   strconv.FormatInt(integrated, 10),
		InclusionPromise: &tPromise{set},
		InclusionProof: &tProof{
			LogIndex:   strconv.FormatInt(idx, 10),
			RootHash:   rootHash,
			TreeSize:   strconv.FormatInt(*proof.TreeSize, 10),
			Hashes:     hashes,
			Checkpoint: tCheckpoint{*proof.Checkpoint},
		},
		CanonicalizedBody: body,
	}
}

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
	ts := newTestSigstore(t)
	payload, sum := sigstorePayload(t, sigstoreLock(1))
	for _, version := range []string{"v0.1", "v0.2", "v0.3"} {
		t.Run(version, func(t *testing.T) {
			b := ts.keyless(t, sigstoreSubject, sigstoreIssuer, payload, bundleOpts{version: version})
			s, err := verifySigstore(b.json(t), sum, ts, nil)
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
		b := ts.keyless(t, "alice@example.com", "https://accounts.google.com", payload, bundleOpts{})
		s, err := verifySigstore(b.json(t), sum, ts, nil)
		if err != nil {
			t.Fatal(err)
		}
		if s != (SigstoreSigner{Issuer: "https://accounts.google.com", Subject: "alice@example.com"}) {
			t.Fatalf("signer %+v", s)
		}
	})
	t.Run("tlog only", func(t *testing.T) {
		b := ts.keyless(t, sigstoreSubject, sigstoreIssuer, payload, bundleOpts{noTSA: true})
		if _, err := verifySigstore(b.json(t), sum, ts, nil); err != nil {
			t.Fatal(err)
		}
	})
}

// A bundle by someone else verifies: it is the trust policy that refuses it.
func TestSigstoreIdentityMismatch(t *testing.T) {
	ts := newTestSigstore(t)
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
			b := ts.keyless(t, c.subject, c.issuer, payload, bundleOpts{})
			s, err := verifySigstore(b.json(t), sum, ts, nil)
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
	ts := newTestSigstore(t)
	payload, sum := sigstorePayload(t, sigstoreLock(1))
	otherPayload, otherSum := sigstorePayload(t, sigstoreLock(2))
	good := func() *tBundle { return ts.keyless(t, sigstoreSubject, sigstoreIssuer, payload, bundleOpts{}) }
	otherCA := newTestFulcio(t, ts.VirtualSigstore)
	otherSigstore := newTestSigstore(t)
	for _, c := range []struct {
		name   string
		bundle func() *tBundle
		want   string
	}{
		{"inclusion proof hash", func() *tBundle {
			b := good()
			b.VerificationMaterial.TlogEntries[0].InclusionProof.Hashes[0][0] ^= 1
			return b
		}, "does not match expected root"},
		{"inclusion proof root", func() *tBundle {
			b := good()
			b.VerificationMaterial.TlogEntries[0].InclusionProof.RootHash[0] ^= 1
			return b
		}, "does not match expected root"},
		{"inclusion proof index", func() *tBundle {
			b := good()
			b.VerificationMaterial.TlogEntries[0].InclusionProof.LogIndex = "1"
			return b
		}, "does not match expected root"},
		{"checkpoint", func() *tBundle {
			b := good()
			cp := &b.VerificationMaterial.TlogEntries[0].InclusionProof.Checkpoint.Envelope
			*cp = strings.Replace(*cp, "\n42\n", "\n43\n", 1)
			return b
		}, "signature on checkpoint did not verify"},
		{"promise", func() *tBundle {
			b := ts.keyless(t, sigstoreSubject, sigstoreIssuer, payload, bundleOpts{version: "v0.1"})
			b.VerificationMaterial.TlogEntries[0].InclusionProof = nil
			b.VerificationMaterial.TlogEntries[0].InclusionPromise.SignedEntryTimestamp[10] ^= 1
			return b
		}, "not enough verified log entries"},
		{"integrated time", func() *tBundle {
			b := ts.keyless(t, sigstoreSubject, sigstoreIssuer, payload, bundleOpts{version: "v0.1"})
			b.VerificationMaterial.TlogEntries[0].InclusionProof = nil
			b.VerificationMaterial.TlogEntries[0].IntegratedTime = strconv.FormatInt(time.Now().Add(-time.Hour).Unix(), 10)
			return b
		}, "not enough verified log entries"},
		{"log entry of another signature", func() *tBundle {
			b := good()
			b.VerificationMaterial.TlogEntries = ts.keyless(t, sigstoreSubject, sigstoreIssuer, payload, bundleOpts{}).VerificationMaterial.TlogEntries
			return b
		}, "transparency log signature does not match"},
		{"no log entry", func() *tBundle {
			return ts.keyless(t, sigstoreSubject, sigstoreIssuer, payload, bundleOpts{noTlog: true})
		}, "not enough verified log entries"},
		{"another Sigstore's log", func() *tBundle {
			b := good()
			b.VerificationMaterial.TlogEntries = otherSigstore.keyless(t, sigstoreSubject, sigstoreIssuer, payload, bundleOpts{}).VerificationMaterial.TlogEntries
			return b
		}, "not enough verified log entries"},
		{"another artefact", func() *tBundle {
			return ts.keyless(t, sigstoreSubject, sigstoreIssuer, otherPayload, bundleOpts{})
		}, "the bundle signs another artefact: its digest is sha256:" + hex.EncodeToString(otherSum)},
		{"another artefact's signature, this digest", func() *tBundle {
			b := ts.keyless(t, sigstoreSubject, sigstoreIssuer, otherPayload, bundleOpts{})
			b.MessageSignature.MessageDigest.Digest = sum
			return b
		}, "transparency log hashedrekord entry digest"},
		{"a logged signature over another artefact", func() *tBundle {
			return ts.keyless(t, sigstoreSubject, sigstoreIssuer, payload, bundleOpts{signOver: otherPayload})
		}, "invalid signature when validating"},
		{"signature", func() *tBundle {
			b := good()
			b.MessageSignature.Signature = signMessage(t, newP256Key(t), payload)
			return b
		}, "transparency log signature does not match"},
		{"another CA", func() *tBundle {
			return otherCA.keyless(t, sigstoreSubject, sigstoreIssuer, payload, bundleOpts{})
		}, "failed to verify leaf certificate"},
		{"another Sigstore", func() *tBundle {
			return otherSigstore.keyless(t, sigstoreSubject, sigstoreIssuer, payload, bundleOpts{})
		}, "not enough verified log entries"},
		{"no SCT", func() *tBundle {
			return ts.keyless(t, sigstoreSubject, sigstoreIssuer, payload, bundleOpts{noSCT: true})
		}, "failed to verify signed certificate timestamp"},
		{"SHA-384 digest", func() *tBundle {
			b := good()
			b.MessageSignature.MessageDigest.Algorithm = "SHA2_384"
			return b
		}, "the bundle signs a SHA2_384 digest"},
		{"no message signature", func() *tBundle {
			b := good()
			b.MessageSignature = nil
			return b
		}, "not a Sigstore bundle"},
		{"DSSE envelope", func() *tBundle {
			b := good()
			b.MessageSignature = nil
			b.DsseEnvelope = &tEnvelope{Payload: []byte(`{"_type":"https://in-toto.io/Statement/v1"}`), PayloadType: "application/vnd.in-toto+json", Signatures: []tDSig{{[]byte("sig")}}}
			return b
		}, "the bundle holds a DSSE envelope"},
		{"media type v0.4", func() *tBundle {
			b := good()
			b.MediaType = "application/vnd.dev.sigstore.bundle.v0.4+json"
			return b
		}, "not a Sigstore bundle"},
		{"no verification material", func() *tBundle {
			b := good()
			b.VerificationMaterial = tMaterial{}
			return b
		}, "not a Sigstore bundle"},
		{"v0.2 without inclusion proof", func() *tBundle {
			b := ts.keyless(t, sigstoreSubject, sigstoreIssuer, payload, bundleOpts{version: "v0.2"})
			b.VerificationMaterial.TlogEntries[0].InclusionProof = nil
			return b
		}, "inclusion proof missing"},
		{"logged after the certificate expired", func() *tBundle {
			return ts.keyless(t, sigstoreSubject, sigstoreIssuer, payload, bundleOpts{noTSA: true, loggedAt: time.Now().Add(30 * time.Minute)})
		}, "integrated time outside certificate validity"},
		{"timestamped in time, logged after the certificate expired", func() *tBundle {
			return ts.keyless(t, sigstoreSubject, sigstoreIssuer, payload, bundleOpts{loggedAt: time.Now().Add(30 * time.Minute)})
		}, "integrated time outside certificate validity"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := verifySigstore(c.bundle().json(t), sum, ts, nil)
			wantSigstoreErr(t, err, c.want)
			t.Log(err)
		})
	}
}

func newP256Key(t testing.TB) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSigstoreMalformed(t *testing.T) {
	ts := newTestSigstore(t)
	payload, sum := sigstorePayload(t, sigstoreLock(1))
	good := ts.keyless(t, sigstoreSubject, sigstoreIssuer, payload, bundleOpts{}).json(t)
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

func pkixPEM(t testing.TB, pub crypto.PublicKey) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

func keyIdentity(t testing.TB, key crypto.Signer) SigstoreIdentity {
	t.Helper()
	id, err := ParsePublicKey(pkixPEM(t, key.Public()))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestSigstoreKeyBased(t *testing.T) {
	ts := newTestSigstore(t)
	payload, sum := sigstorePayload(t, sigstoreLock(1))
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	other := keyIdentity(t, newP256Key(t))
	for _, c := range []struct {
		name string
		key  crypto.Signer
		o    bundleOpts
	}{
		{"P-256", newP256Key(t), bundleOpts{}},
		{"P-384", p384, bundleOpts{}},
		{"RSA", rsaKey, bundleOpts{}},
		{"P-256 v0.1", newP256Key(t), bundleOpts{version: "v0.1"}},
		{"timestamp only", newP256Key(t), bundleOpts{noTlog: true}},
		{"log entry only", newP256Key(t), bundleOpts{noTSA: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := keyIdentity(t, c.key)
			data := ts.keyed(t, c.key, payload, c.o).json(t)
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
			_, err = verifySigstore(data, sum, ts, []SigstoreIdentity{other, keyIdentity(t, newP256Key(t))})
			wantSigstoreErr(t, err, "the bundle does not verify with any of the trust policy's 2 public keys")
			_, err = verifySigstore(data, sum, ts, []SigstoreIdentity{{Issuer: sigstoreIssuer, Subject: sigstoreSubject}})
			wantSigstoreErr(t, err, "the trust policy names no sigstore public_key")
		})
	}
	key := newP256Key(t)
	id := keyIdentity(t, key)
	t.Run("no timestamp", func(t *testing.T) {
		_, err := verifySigstore(ts.keyed(t, key, payload, bundleOpts{noTlog: true, noTSA: true}).json(t), sum, ts, []SigstoreIdentity{id})
		wantSigstoreErr(t, err, "threshold not met")
	})
	t.Run("bad inclusion proof", func(t *testing.T) {
		b := ts.keyed(t, key, payload, bundleOpts{})
		b.VerificationMaterial.TlogEntries[0].InclusionProof.Hashes[0][3] ^= 1
		_, err := verifySigstore(b.json(t), sum, ts, []SigstoreIdentity{id})
		wantSigstoreErr(t, err, "failed to verify log inclusion")
	})
	t.Run("another artefact", func(t *testing.T) {
		other, _ := sigstorePayload(t, sigstoreLock(2))
		_, err := verifySigstore(ts.keyed(t, key, other, bundleOpts{}).json(t), sum, ts, []SigstoreIdentity{id})
		wantSigstoreErr(t, err, "the bundle signs another artefact")
	})
	t.Run("a certificate's key", func(t *testing.T) {
		// A keyless bundle is not a key-based one because the policy
		// lists its key: it must chain to Fulcio.
		b := ts.keyless(t, sigstoreSubject, sigstoreIssuer, payload, bundleOpts{})
		s, err := verifySigstore(b.json(t), sum, ts, []SigstoreIdentity{id})
		if err != nil || s.Issuer != sigstoreIssuer {
			t.Fatalf("%+v %v", s, err)
		}
	})
	t.Run("Ed25519", func(t *testing.T) {
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		_, err = verifySigstore(ts.keyed(t, priv, payload, bundleOpts{noTlog: true}).json(t), sum, ts, []SigstoreIdentity{keyIdentity(t, priv)})
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
		_, err = verifySigstore(read("public-key-validity.sigstore.json"), sum[:], tr, []SigstoreIdentity{keyIdentity(t, newP256Key(t))})
		wantSigstoreErr(t, err, "the bundle does not verify with public key")
	})
}

func TestSigstoreSignature(t *testing.T) {
	ts := newTestSigstore(t)
	lock := sigstoreLock(1)
	payload, _ := sigstorePayload(t, lock)
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	t.Run("keyless", func(t *testing.T) {
		b := ts.keyless(t, sigstoreSubject, sigstoreIssuer, payload, bundleOpts{})
		data := b.json(t)
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
		key := newP256Key(t)
		id := keyIdentity(t, key)
		s, err := SigstoreSignature(ts.keyed(t, key, payload, bundleOpts{noTlog: true}).json(t), lock, ts, []SigstoreIdentity{id}, now)
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
		_, err := SigstoreSignature(ts.keyless(t, sigstoreSubject, sigstoreIssuer, payload, bundleOpts{}).json(t), sigstoreLock(2), ts, nil, now)
		wantSigstoreErr(t, err, "the bundle signs another artefact")
	})
	t.Run("a lock that is not JSON", func(t *testing.T) {
		_, err := SigstoreSignature(ts.keyless(t, sigstoreSubject, sigstoreIssuer, payload, bundleOpts{}).json(t), []byte("{"), ts, nil, now)
		wantSigstoreErr(t, err, "the lock is not valid JSON")
	})
	t.Run("a subject no signature file can name", func(t *testing.T) {
		_, err := SigstoreSignature(ts.keyless(t, "https://example.com/"+strings.Repeat("a", 1024), sigstoreIssuer, payload, bundleOpts{}).json(t), lock, ts, nil, now)
		wantSigstoreErr(t, err, "is not 1 to 1024 printable characters")
	})
	t.Run("an issuer with control characters", func(t *testing.T) {
		_, err := SigstoreSignature(ts.keyless(t, sigstoreSubject, "https://issuer.example\x1b[31m", payload, bundleOpts{}).json(t), lock, ts, nil, now)
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
		"P-256":   newP256Key(t).Public(),
		"P-384":   p384.Public(),
		"Ed25519": edPub,
		"RSA":     rsa2048.Public(),
	} {
		t.Run(name, func(t *testing.T) {
			id, err := ParsePublicKey(append([]byte("# cosign.pub\n"), pkixPEM(t, pub)...))
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
	ecPriv, err := x509.MarshalECPrivateKey(newP256Key(t))
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(newP256Key(t))
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestSigstore(t)
	p256 := pkixPEM(t, newP256Key(t).Public())
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
		{"certificate", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.fulcio.Root.Raw}), `a PEM "CERTIFICATE" block`},
		{"RSA 1024", pkixPEM(t, rsa1024.Public()), "an RSA key of 1024 bits"},
		{"P-224", pkixPEM(t, p224.Public()), "an ECDSA key on P-224"},
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
	ts := newTestSigstore(f)
	payload, sum := sigstorePayload(f, sigstoreLock(1))
	key := newP256Key(f)
	keys := []SigstoreIdentity{keyIdentity(f, key)}
	for _, b := range [][]byte{
		ts.keyless(f, sigstoreSubject, sigstoreIssuer, payload, bundleOpts{}).json(f),
		ts.keyless(f, sigstoreSubject, sigstoreIssuer, payload, bundleOpts{version: "v0.1"}).json(f),
		ts.keyed(f, key, payload, bundleOpts{}).json(f),
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
