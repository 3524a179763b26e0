package sigstoretest

import (
	"encoding/json"
	"testing"
)

// Bundle is a Sigstore bundle as protobuf-specs' protojson mapping writes
// it (int64 as strings, bytes as base64), field by field, for a test to
// change before JSON.
type Bundle struct {
	MediaType            string            `json:"mediaType"`
	VerificationMaterial Material          `json:"verificationMaterial"`
	MessageSignature     *MessageSignature `json:"messageSignature,omitempty"`
	DsseEnvelope         *Envelope         `json:"dsseEnvelope,omitempty"`
}

// Material is a bundle's verification material.
type Material struct {
	Certificate               *RawBytes      `json:"certificate,omitempty"`
	X509CertificateChain      *Chain         `json:"x509CertificateChain,omitempty"`
	PublicKey                 *Hint          `json:"publicKey,omitempty"`
	TlogEntries               []Entry        `json:"tlogEntries,omitempty"`
	TimestampVerificationData *TimestampData `json:"timestampVerificationData,omitempty"`
}

// RawBytes is a DER certificate.
type RawBytes struct {
	RawBytes []byte `json:"rawBytes"`
}

// Chain is a v0.1 or v0.2 bundle's certificate chain.
type Chain struct {
	Certificates []RawBytes `json:"certificates"`
}

// Hint names a key-based bundle's public key.
type Hint struct {
	Hint string `json:"hint"`
}

// Entry is a transparency log entry.
type Entry struct {
	LogIndex          string      `json:"logIndex"`
	LogID             LogID       `json:"logId"`
	KindVersion       KindVersion `json:"kindVersion"`
	IntegratedTime    string      `json:"integratedTime"`
	InclusionPromise  *Promise    `json:"inclusionPromise,omitempty"`
	InclusionProof    *Proof      `json:"inclusionProof,omitempty"`
	CanonicalizedBody []byte      `json:"canonicalizedBody"`
}

// LogID is a log's key ID.
type LogID struct {
	KeyID []byte `json:"keyId"`
}

// KindVersion is an entry's kind and version (hashedrekord 0.0.1).
type KindVersion struct {
	Kind    string `json:"kind"`
	Version string `json:"version"`
}

// Promise is an entry's signed entry timestamp.
type Promise struct {
	SignedEntryTimestamp []byte `json:"signedEntryTimestamp"`
}

// Proof is an entry's inclusion proof.
type Proof struct {
	LogIndex   string     `json:"logIndex"`
	RootHash   []byte     `json:"rootHash"`
	TreeSize   string     `json:"treeSize"`
	Hashes     [][]byte   `json:"hashes"`
	Checkpoint Checkpoint `json:"checkpoint"`
}

// Checkpoint is a proof's signed checkpoint (a signed note).
type Checkpoint struct {
	Envelope string `json:"envelope"`
}

// TimestampData holds a bundle's RFC 3161 timestamps.
type TimestampData struct {
	Rfc3161Timestamps []Timestamp `json:"rfc3161Timestamps"`
}

// Timestamp is one RFC 3161 timestamp response.
type Timestamp struct {
	SignedTimestamp []byte `json:"signedTimestamp"`
}

// MessageSignature is a signature over an artefact's digest.
type MessageSignature struct {
	MessageDigest MessageDigest `json:"messageDigest"`
	Signature     []byte        `json:"signature"`
}

// MessageDigest is the signed artefact's digest.
type MessageDigest struct {
	Algorithm string `json:"algorithm"`
	Digest    []byte `json:"digest"`
}

// Envelope is a DSSE envelope (an attestation's).
type Envelope struct {
	Payload     []byte              `json:"payload"`
	PayloadType string              `json:"payloadType"`
	Signatures  []EnvelopeSignature `json:"signatures"`
}

// EnvelopeSignature is one of an envelope's signatures.
type EnvelopeSignature struct {
	Sig []byte `json:"sig"`
}

// JSON is the bundle's JSON, indented as cosign writes it.
func (b *Bundle) JSON(t testing.TB) []byte {
	t.Helper()
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return data
}
