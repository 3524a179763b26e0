package approval

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"time"

	"github.com/mcpform/mcpform/internal/lockedfile"
	"github.com/mcpform/mcpform/internal/strictjson"
	"github.com/mcpform/mcpform/lock"
)

// FileVersion is the version of the signature file's format.
const FileVersion = 1

// Namespace is the sshsig namespace of a lock's signature: a signature
// made for another purpose (a git commit, a file) never verifies as one.
const Namespace = "mcpform"

// Signature kinds.
const (
	KindSSH      = "ssh"
	KindSigstore = "sigstore"
)

// maxFile bounds a signature file: enough for hundreds of signatures.
const maxFile = 8 << 20

// File is a signature file: every signature made over a lock (or over
// the lock a plan would write), in the order they were added.
type File struct {
	Version    int         `json:"version"`
	Signatures []Signature `json:"signatures"`
}

// Signature is one approval. Signer, Key and SignedAt are what the
// signer claims, for people to read; only the signature itself (SSHSig or
// Bundle) is checked, and Check derives who signed from the key or the
// certificate, never from these fields alone.
type Signature struct {
	// Kind is KindSSH or KindSigstore.
	Kind string `json:"kind"`
	// Signer is the principal (an SSH signature: a name allowed_signers
	// lists for the key) or the certificate's identity (Sigstore).
	Signer string `json:"signer"`
	// Key is the SSH key's SHA256 fingerprint, or the Sigstore
	// certificate's OIDC issuer.
	Key string `json:"key"`
	// LockDigest is the digest of the lock signed (Digest).
	LockDigest string `json:"lockDigest"`
	// SignedAt is when the signature was made, RFC 3339 in UTC.
	SignedAt string `json:"signedAt"`
	// SSHSig is the armored sshsig signature (-----BEGIN SSH SIGNATURE-----).
	SSHSig string `json:"sshsig,omitempty"`
	// Bundle is the Sigstore bundle, as JSON.
	Bundle json.RawMessage `json:"bundle,omitempty"`
}

// Path is where the signatures of the lock (or plan file) at p live.
func Path(p string) string { return p + ".sig" }

// Payload is what a signature signs: the lock's RFC 8785 canonical form
// (the canonicalisation of the lock's digests), so that indentation (a
// plan file re-indents its lock) does not change it and any other edit
// does. `mcpform sign -payload` prints it, for ssh-keygen -Y sign and
// cosign sign-blob.
func Payload(lockData []byte) ([]byte, error) {
	if err := strictjson.Check(lockData); err != nil {
		return nil, fmt.Errorf("the lock is not valid JSON: %w", err)
	}
	c, err := lock.Canonical(lockData)
	if err != nil {
		return nil, fmt.Errorf("the lock: %w", err)
	}
	return c, nil
}

// Digest is the lock digest a signature names: "sha256:" and the hex
// SHA-256 of the payload, the same value as lock.Digest of the lock.
func Digest(payload []byte) string {
	sum := sha256.Sum256(payload)
	return "sha256:" + hex.EncodeToString(sum[:])
}

var (
	digestPattern      = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	fingerprintPattern = regexp.MustCompile(`^SHA256:[A-Za-z0-9+/]{43}$`)
)

// Parse reads a signature file strictly: unknown keys, a duplicate key,
// a kind it does not know or a malformed field are refused, naming the
// signature by its position.
func Parse(data []byte) (*File, error) {
	if len(data) > maxFile {
		return nil, fmt.Errorf("the signature file is larger than %d bytes", maxFile)
	}
	if err := strictjson.Check(data); err != nil {
		return nil, fmt.Errorf("the signature file is not valid JSON: %w", err)
	}
	var f File
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("the signature file: %w", err)
	}
	if f.Version != FileVersion {
		return nil, fmt.Errorf("the signature file has version %d; this mcpform reads version %d", f.Version, FileVersion)
	}
	for i, s := range f.Signatures {
		if err := s.check(); err != nil {
			return nil, fmt.Errorf("signature %d: %w", i+1, err)
		}
	}
	return &f, nil
}

func (s *Signature) check() error {
	if !digestPattern.MatchString(s.LockDigest) {
		return errors.New(`lockDigest must be "sha256:" and 64 lowercase hex digits`)
	}
	if _, err := time.Parse(time.RFC3339, s.SignedAt); err != nil {
		return fmt.Errorf("signedAt must be an RFC 3339 time: %w", err)
	}
	if !printable(s.Signer) || s.Signer == "" || len(s.Signer) > 1024 {
		return errors.New("signer must be 1 to 1024 printable characters")
	}
	switch s.Kind {
	case KindSSH:
		if !fingerprintPattern.MatchString(s.Key) {
			return errors.New(`an ssh signature's key must be a SHA256 fingerprint ("SHA256:" and 43 base64 characters)`)
		}
		if s.SSHSig == "" || s.Bundle != nil {
			return errors.New("an ssh signature has sshsig and no bundle")
		}
	case KindSigstore:
		if !printable(s.Key) || len(s.Key) > 1024 {
			return errors.New("a sigstore signature's key (the OIDC issuer) must be printable")
		}
		if len(s.Bundle) == 0 || s.SSHSig != "" {
			return errors.New("a sigstore signature has a bundle and no sshsig")
		}
	default:
		return fmt.Errorf("unknown kind %q (want %q or %q)", s.Kind, KindSSH, KindSigstore)
	}
	return nil
}

func printable(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return false
		}
	}
	return true
}

// Load reads the signature file at path; a missing file is an empty one.
// Whoever writes the repository writes mcp.lock.sig: a symlink to
// /dev/zero, to /dev/stdin (run's client stream) or a FIFO is refused
// before it is opened or read (lockedfile.ReadRegular).
func Load(path string) (*File, error) {
	data, err := lockedfile.ReadRegular(path, maxFile)
	if errors.Is(err, fs.ErrNotExist) {
		return &File{Version: FileVersion}, nil
	}
	if err != nil {
		return nil, err
	}
	f, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// Marshal writes f as indented JSON, a signature per element.
func Marshal(f *File) ([]byte, error) {
	out := File{Version: FileVersion, Signatures: f.Signatures}
	if out.Signatures == nil {
		out.Signatures = []Signature{}
	}
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// Save writes f to path atomically; a file without signatures is removed
// instead, so a lock nobody signed has no signature file.
func Save(path string, f *File) error {
	if len(f.Signatures) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	data, err := Marshal(f)
	if err != nil {
		return err
	}
	return lockedfile.WriteFile(path, data, 0o644, nil)
}

// Add appends s to f, replacing a signature by the same key over the same
// lock (signing twice is one approval, the newer one kept).
func (f *File) Add(s Signature) {
	for i, old := range f.Signatures {
		if old.Kind == s.Kind && old.Key == s.Key && old.Signer == s.Signer && old.LockDigest == s.LockDigest {
			f.Signatures[i] = s
			return
		}
	}
	f.Signatures = append(f.Signatures, s)
}

// Over returns the signatures of f made over the lock with digest d.
func (f *File) Over(d string) []Signature {
	var out []Signature
	for _, s := range f.Signatures {
		if s.LockDigest == d {
			out = append(out, s)
		}
	}
	return out
}
