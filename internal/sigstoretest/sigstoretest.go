package sigstoretest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
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
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/gowebpki/jcs"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore-go/pkg/tlog"
)

// Sigstore is a test Sigstore: a Fulcio CA, a CT log, and the Rekor and
// TSA of the VirtualSigstore it embeds. It is the root.TrustedMaterial
// its bundles verify against.
type Sigstore struct {
	*ca.VirtualSigstore
	fulcio    *root.FulcioCertificateAuthority
	fulcioKey *ecdsa.PrivateKey
	ctKey     *ecdsa.PrivateKey
}

// New is a test Sigstore of its own: its Rekor already holds an entry, so
// the inclusion proofs of its bundles have a hash in them.
func New(t testing.TB) *Sigstore {
	t.Helper()
	vs, err := ca.NewVirtualSigstoreWithExistingRekorEntry()
	if err != nil {
		t.Fatal(err)
	}
	return withFulcio(t, vs)
}

// OtherFulcio is a test Sigstore with ts's Rekor and TSA but a Fulcio CA
// (and a CT log) of its own: its certificates do not chain to ts's root.
func (ts *Sigstore) OtherFulcio(t testing.TB) *Sigstore {
	t.Helper()
	return withFulcio(t, ts.VirtualSigstore)
}

func withFulcio(t testing.TB, vs *ca.VirtualSigstore) *Sigstore {
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
	return &Sigstore{
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

// FulcioCertificateAuthorities is the test Fulcio.
func (ts *Sigstore) FulcioCertificateAuthorities() []root.CertificateAuthority {
	return []root.CertificateAuthority{ts.fulcio}
}

// FulcioRoot is the test Fulcio's root certificate.
func (ts *Sigstore) FulcioRoot() *x509.Certificate { return ts.fulcio.Root }

// CTLogs is the CT log whose SCTs the test Fulcio embeds.
func (ts *Sigstore) CTLogs() map[string]*root.TransparencyLog {
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

// TrustedRootJSON is the test Sigstore as a trusted root file
// (application/vnd.dev.sigstore.trustedroot+json;version=0.1, as
// root.NewTrustedRootFromJSON reads it): its Fulcio, CT log, Rekor and
// TSA, valid from an hour before the call to an hour after.
func (ts *Sigstore) TrustedRootJSON(t testing.TB) []byte {
	t.Helper()
	// VirtualSigstore's Rekor log has its hex log ID as its ID's bytes; a
	// trusted root file holds the ID itself (and keys the log by its hex).
	rekor := map[string]*root.TransparencyLog{}
	for id, l := range ts.RekorLogs() {
		raw, err := hex.DecodeString(id)
		if err != nil {
			t.Fatal(err)
		}
		c := *l
		c.ID = raw
		rekor[id] = &c
	}
	tr, err := root.NewTrustedRoot(root.TrustedRootMediaType01, ts.FulcioCertificateAuthorities(), ts.CTLogs(), ts.TimestampingAuthorities(), rekor)
	if err != nil {
		t.Fatal(err)
	}
	data, err := tr.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// Leaf issues a Fulcio certificate for subject (a URI or an email) and
// issuer over pub, with an SCT embedded unless noSCT.
func (ts *Sigstore) Leaf(t testing.TB, subject, issuer string, pub crypto.PublicKey, noSCT bool) *x509.Certificate {
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

// MediaTypes are the bundle media types by version.
var MediaTypes = map[string]string{
	"v0.1": "application/vnd.dev.sigstore.bundle+json;version=0.1",
	"v0.2": "application/vnd.dev.sigstore.bundle+json;version=0.2",
	"v0.3": "application/vnd.dev.sigstore.bundle.v0.3+json",
}

// Opts vary a bundle; the zero value is what cosign sign-blob --bundle
// writes (v0.3, a Rekor entry with promise and inclusion proof, an RFC
// 3161 timestamp, a certificate with an SCT).
type Opts struct {
	Version string // v0.1 to v0.3; v0.3 when ""
	NoTlog  bool   // no Rekor entry
	NoTSA   bool   // no RFC 3161 timestamp
	NoSCT   bool   // a certificate without an SCT
	// SignOver is what the signature signs, when not the artefact the
	// bundle's digest and log entry name.
	SignOver []byte
	// LoggedAt is the log entry's integrated time; now when zero.
	LoggedAt time.Time
}

// SignMessage signs artefact's SHA-256 with key the way sigstore's
// clients do: ECDSA (ASN.1) or RSA PKCS #1 v1.5 over the digest, Ed25519
// over the artefact.
func SignMessage(t testing.TB, key crypto.Signer, artefact []byte) []byte {
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

// Keyless is the bundle a CI job's cosign sign-blob would make over
// artefact: a Fulcio certificate for subject and issuer, a hashedrekord
// entry with its promise and inclusion proof, an RFC 3161 timestamp.
func (ts *Sigstore) Keyless(t testing.TB, subject, issuer string, artefact []byte, o Opts) *Bundle {
	t.Helper()
	key := NewP256Key(t)
	cert := ts.Leaf(t, subject, issuer, key.Public(), o.NoSCT)
	sig := SignMessage(t, key, artefact)
	if o.SignOver != nil {
		sig = SignMessage(t, key, o.SignOver)
	}
	b := ts.bundle(t, artefact, sig, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}), o)
	if b.MediaType == MediaTypes["v0.3"] {
		b.VerificationMaterial.Certificate = &RawBytes{cert.Raw}
	} else {
		b.VerificationMaterial.X509CertificateChain = &Chain{[]RawBytes{{cert.Raw}}}
	}
	return b
}

// KeylessBundle is Keyless's bundle with the default options, as JSON.
func (ts *Sigstore) KeylessBundle(t testing.TB, subject, issuer string, artefact []byte) []byte {
	t.Helper()
	return ts.Keyless(t, subject, issuer, artefact, Opts{}).JSON(t)
}

// Keyed is the bundle cosign sign-blob --key would make over artefact.
func (ts *Sigstore) Keyed(t testing.TB, key crypto.Signer, artefact []byte, o Opts) *Bundle {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		t.Fatal(err)
	}
	sig := SignMessage(t, key, artefact)
	b := ts.bundle(t, artefact, sig, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), o)
	hint := sha256.Sum256(der)
	b.VerificationMaterial.PublicKey = &Hint{base64.StdEncoding.EncodeToString(hint[:])}
	return b
}

// KeyBundle is Keyed's bundle with the default options, as JSON.
func (ts *Sigstore) KeyBundle(t testing.TB, key crypto.Signer, artefact []byte) []byte {
	t.Helper()
	return ts.Keyed(t, key, artefact, Opts{}).JSON(t)
}

// bundle is the bundle of a message signature sig over artefact by the
// holder of verifier (a PEM certificate or public key), its verification
// material but the certificate or key hint.
func (ts *Sigstore) bundle(t testing.TB, artefact, sig, verifier []byte, o Opts) *Bundle {
	t.Helper()
	if o.Version == "" {
		o.Version = "v0.3"
	}
	sum := sha256.Sum256(artefact)
	b := &Bundle{
		MediaType: MediaTypes[o.Version],
		MessageSignature: &MessageSignature{
			MessageDigest: MessageDigest{Algorithm: "SHA2_256", Digest: sum[:]},
			Signature:     sig,
		},
	}
	if !o.NoTlog {
		b.VerificationMaterial.TlogEntries = []Entry{ts.entry(t, sum[:], sig, verifier, o.LoggedAt)}
	}
	if !o.NoTSA {
		tsr, err := ts.TimestampResponse(sig)
		if err != nil {
			t.Fatal(err)
		}
		b.VerificationMaterial.TimestampVerificationData = &TimestampData{[]Timestamp{{tsr}}}
	}
	return b
}

// entry is the test Rekor's hashedrekord entry for a signature over sum.
func (ts *Sigstore) entry(t testing.TB, sum, sig, verifier []byte, at time.Time) Entry {
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
	return Entry{
		LogIndex:         strconv.FormatInt(idx, 10),
		LogID:            LogID{logID},
		KindVersion:      KindVersion{"hashedrekord", "0.0.1"},
		IntegratedTime:   strconv.FormatInt(integrated, 10),
		InclusionPromise: &Promise{set},
		InclusionProof: &Proof{
			LogIndex:   strconv.FormatInt(idx, 10),
			RootHash:   rootHash,
			TreeSize:   strconv.FormatInt(*proof.TreeSize, 10),
			Hashes:     hashes,
			Checkpoint: Checkpoint{*proof.Checkpoint},
		},
		CanonicalizedBody: body,
	}
}

// NewP256Key is a fresh ECDSA P-256 key, the kind cosign generate-key-pair
// makes and Fulcio certifies.
func NewP256Key(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// PublicKeyPEM is pub as a PKIX PEM block, as cosign.pub holds it.
func PublicKeyPEM(t testing.TB, pub crypto.PublicKey) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}
