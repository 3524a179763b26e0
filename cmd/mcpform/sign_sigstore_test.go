package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpform/mcpform/approval"
	"github.com/mcpform/mcpform/internal/sigstoretest"
	"github.com/mcpform/mcpform/lock"
)

// Sigstore approvals end to end through the CLI: sign -payload prints what
// a CI job signs, sign -import turns the job's bundle into an entry of
// mcp.lock.sig, and verify and show check it against the trust file's
// trusted_root (internal/sigstoretest's Sigstore) and sigstore blocks.

const (
	sigIssuer  = "https://token.actions.githubusercontent.com"
	sigSubject = "https://github.com/acme/mcp-config/.github/workflows/sign.yml@refs/heads/main"
)

// sigstoreFixture is a lock, a test Sigstore, and a private trust
// directory holding its trusted root (root.json).
type sigstoreFixture struct {
	ts                      *sigstoretest.Sigstore
	dir, lockPath, trustDir string
}

func newSigstoreFixture(t *testing.T) sigstoreFixture {
	t.Helper()
	dir := t.TempDir()
	fx := sigstoreFixture{ts: sigstoretest.New(t), dir: dir, lockPath: filepath.Join(dir, "mcp.lock"), trustDir: filepath.Join(dir, "trust")}
	writeTestLock(t, fx.lockPath, []string{})
	if err := os.Mkdir(fx.trustDir, 0o700); err != nil {
		t.Fatal(err)
	}
	fx.writeTrustFile(t, "root.json", string(fx.ts.TrustedRootJSON(t)))
	return fx
}

// writeTrustFile writes a file of the trust directory and returns its path.
func (fx sigstoreFixture) writeTrustFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(fx.trustDir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// trust writes a trust file requiring one approval, with the test
// Sigstore's root and the given sigstore block's body.
func (fx sigstoreFixture) trust(t *testing.T, name, block string) string {
	t.Helper()
	return fx.writeTrustFile(t, name, "trusted_root = \"root.json\"\nrequired = 1\nsigstore {\n"+block+"\n}\n")
}

func identityBlock(issuer, subject string) string {
	return "  issuer  = \"" + issuer + "\"\n  subject = \"" + subject + "\""
}

// payload is what mcpform sign -payload prints for the lock at path.
func (fx sigstoreFixture) payload(t *testing.T, path string) []byte {
	t.Helper()
	code, out, errb := runMcpform(t, "sign", "-payload", path)
	if code != exitOK || out == "" {
		t.Fatalf("sign -payload %s: exit %d\n%s", path, code, errb)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want, err := approval.Payload(data); err != nil || !bytes.Equal([]byte(out), want) {
		t.Fatalf("sign -payload printed %q, want the lock's canonical form %q (%v)", out, want, err)
	}
	return []byte(out)
}

// writeBundle writes a bundle where a CI job's cosign sign-blob --bundle
// would leave it.
func (fx sigstoreFixture) writeBundle(t *testing.T, name string, bundle []byte) string {
	t.Helper()
	p := filepath.Join(fx.dir, name)
	if err := os.WriteFile(p, bundle, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// runMcpform runs mcpform with args (paths absolute: -chdir would move
// every test's working directory) and an empty environment.
func runMcpform(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	io := &stdio{in: strings.NewReader(""), out: &out, err: &errb, getenv: func(string) string { return "" }}
	code := run(context.Background(), args, io)
	return code, out.String(), errb.String()
}

// wantRun fails unless the run exited with code and its output (stdout and
// stderr) says each of says.
func wantRun(t *testing.T, what string, code int, out, errb string, wantCode int, says ...string) {
	t.Helper()
	if code != wantCode {
		t.Errorf("%s: exit %d, want %d\nstdout:\n%sstderr:\n%s", what, code, wantCode, out, errb)
		return
	}
	for _, s := range says {
		if !strings.Contains(out+errb, s) {
			t.Errorf("%s: the output does not say %q\nstdout:\n%sstderr:\n%s", what, s, out, errb)
		}
	}
}

// TestSigstoreKeylessApproval: a CI job's keyless bundle over sign
// -payload's bytes approves the lock for a trust file naming its issuer
// and subject (exactly, or by subject_regex), and for no other.
func TestSigstoreKeylessApproval(t *testing.T) {
	fx := newSigstoreFixture(t)
	trust := fx.trust(t, "trust.hcl", identityBlock(sigIssuer, sigSubject))
	bundle := fx.writeBundle(t, "bundle.json", fx.ts.KeylessBundle(t, sigSubject, sigIssuer, fx.payload(t, fx.lockPath)))

	code, out, errb := runMcpform(t, "sign", "-import", bundle, "-trust", trust, fx.lockPath)
	wantRun(t, "sign -import", code, out, errb, exitOK,
		"as "+sigSubject+" with sigstore "+sigIssuer+"; "+approval.Path(fx.lockPath)+" holds 1 signature(s)",
		"Approvals: approved by "+sigSubject+" (1 of 1 required; trust file "+trust+")")
	sigs, err := approval.Load(approval.Path(fx.lockPath))
	if err != nil || len(sigs.Signatures) != 1 || sigs.Signatures[0].Kind != approval.KindSigstore || sigs.Signatures[0].Signer != sigSubject {
		t.Fatalf("the signature file: %+v %v", sigs, err)
	}

	code, out, errb = runMcpform(t, "show", "-lock", fx.lockPath, "-trust", trust)
	wantRun(t, "show", code, out, errb, exitOK, fx.lockPath+": approved by "+sigSubject+" (1 of 1 required")

	for _, c := range []struct{ name, block string }{
		{"another subject", identityBlock(sigIssuer, "https://github.com/acme/mcp-config/.github/workflows/sign.yml@refs/heads/dev")},
		{"another issuer", identityBlock("https://gitlab.com", sigSubject)},
		{"a subject_regex of another organisation", "  issuer = \"" + sigIssuer + "\"\n  subject_regex = \"https://github\\\\.com/mallory/.*\""},
	} {
		other := fx.trust(t, "other.hcl", c.block)
		code, out, errb := runMcpform(t, "verify", "-lock", fx.lockPath, "-trust", other)
		wantRun(t, "verify, "+c.name, code, out, errb, verifyLockProblem,
			fx.lockPath+" is not approved: not approved: 0 of 1 required approvals (no allowed signer); 1 more needed (trust file "+other+")",
			`signature 1 by "`+sigSubject+`" (sigstore `+sigIssuer+`): not-allowed: no sigstore block of the trust file names this issuer and subject`)
		code, out, errb = runMcpform(t, "show", "-lock", fx.lockPath, "-trust", other)
		wantRun(t, "show, "+c.name, code, out, errb, exitOK, "Warning: "+fx.lockPath+" is not approved: not approved: 0 of 1 required approvals",
			"not-allowed: no sigstore block of the trust file names this issuer and subject")
		if strings.Contains(out+errb, "approved by") {
			t.Errorf("show, %s: says approved by\n%s%s", c.name, out, errb)
		}
	}

	// A subject_regex matching the workflow of any repository of acme.
	pattern := fx.trust(t, "pattern.hcl", "  issuer = \""+sigIssuer+"\"\n  subject_regex = \"https://github\\\\.com/acme/[^/]+/\\\\.github/workflows/sign\\\\.yml@refs/heads/main\"")
	code, out, errb = runMcpform(t, "show", "-lock", fx.lockPath, "-trust", pattern)
	wantRun(t, "show, subject_regex", code, out, errb, exitOK, fx.lockPath+": approved by "+sigSubject+" (1 of 1 required; trust file "+pattern+")")
}

// TestSigstoreTampering: a lock changed after its bundle was made, and a
// bundle over another lock, are refused.
func TestSigstoreTampering(t *testing.T) {
	fx := newSigstoreFixture(t)
	trust := fx.trust(t, "trust.hcl", identityBlock(sigIssuer, sigSubject))
	bundle := fx.writeBundle(t, "bundle.json", fx.ts.KeylessBundle(t, sigSubject, sigIssuer, fx.payload(t, fx.lockPath)))
	if code, out, errb := runMcpform(t, "sign", "-import", bundle, "-trust", trust, fx.lockPath); code != exitOK {
		t.Fatalf("sign -import: exit %d\n%s%s", code, out, errb)
	}

	t.Run("one byte of the lock", func(t *testing.T) {
		reviewed, err := os.ReadFile(fx.lockPath)
		if err != nil {
			t.Fatal(err)
		}
		defer os.WriteFile(fx.lockPath, reviewed, 0o644)
		i := bytes.Index(reviewed, []byte(`"mcpform test"`))
		if i < 0 {
			t.Fatalf("the lock has no generator to change:\n%s", reviewed)
		}
		changed := bytes.Clone(reviewed)
		changed[i+len(`"mcpform tes`)] = 'T'
		if err := os.WriteFile(fx.lockPath, changed, 0o644); err != nil {
			t.Fatal(err)
		}
		// The control: the changed lock is a good lock; only its
		// signature says it is not the reviewed one.
		if _, _, err := lock.LoadBytes(fx.lockPath); err != nil {
			t.Fatalf("control: the changed lock does not load: %v", err)
		}
		code, out, errb := runMcpform(t, "verify", "-lock", fx.lockPath, "-trust", trust)
		wantRun(t, "verify", code, out, errb, verifyLockProblem,
			fx.lockPath+" is not approved: invalid signatures: the lock or mcp.lock.sig was changed after it was signed",
			`signature 1 by "`+sigSubject+`" (sigstore `+sigIssuer+`): invalid: it is over another lock`)
	})

	// Lock B differs from the reviewed lock A in its sandbox's network.
	otherDir := t.TempDir()
	lockB := filepath.Join(otherDir, "mcp.lock")
	writeTestLock(t, lockB, []string{"evil.example.com:443"})
	bundleB := fx.writeBundle(t, "bundle-b.json", fx.ts.KeylessBundle(t, sigSubject, sigIssuer, fx.payload(t, lockB)))

	t.Run("a bundle over another lock, imported", func(t *testing.T) {
		before, err := os.ReadFile(approval.Path(fx.lockPath))
		if err != nil {
			t.Fatal(err)
		}
		code, out, errb := runMcpform(t, "sign", "-import", bundleB, "-trust", trust, fx.lockPath)
		wantRun(t, "sign -import", code, out, errb, exitError, "Error: the bundle signs another artefact: its digest is sha256:")
		if after, err := os.ReadFile(approval.Path(fx.lockPath)); err != nil || !bytes.Equal(after, before) {
			t.Fatalf("a refused import changed %s: %v", approval.Path(fx.lockPath), err)
		}
		// The control: it is a good bundle, for lock B.
		code, out, errb = runMcpform(t, "sign", "-import", bundleB, "-trust", trust, lockB)
		wantRun(t, "control: sign -import for lock B", code, out, errb, exitOK, "Approvals: approved by "+sigSubject)
	})

	t.Run("a bundle over another lock, in mcp.lock.sig", func(t *testing.T) {
		reviewedSigs, err := os.ReadFile(approval.Path(fx.lockPath))
		if err != nil {
			t.Fatal(err)
		}
		defer os.WriteFile(approval.Path(fx.lockPath), reviewedSigs, 0o644)
		// Lock B's signature file copied beside lock A, as it is.
		sigsB, err := os.ReadFile(approval.Path(lockB))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(approval.Path(fx.lockPath), sigsB, 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errb := runMcpform(t, "verify", "-lock", fx.lockPath, "-trust", trust)
		wantRun(t, "verify, B's entry", code, out, errb, verifyLockProblem,
			fx.lockPath+" is not approved: invalid signatures", "invalid: it is over another lock")
		// And its lockDigest rewritten to lock A's: the bundle still
		// signs B's payload.
		f, err := approval.Parse(sigsB)
		if err != nil {
			t.Fatal(err)
		}
		lockA, _ := os.ReadFile(fx.lockPath)
		payloadA, err := approval.Payload(lockA)
		if err != nil {
			t.Fatal(err)
		}
		f.Signatures[0].LockDigest = approval.Digest(payloadA)
		if err := approval.Save(approval.Path(fx.lockPath), f); err != nil {
			t.Fatal(err)
		}
		code, out, errb = runMcpform(t, "verify", "-lock", fx.lockPath, "-trust", trust)
		wantRun(t, "verify, B's entry naming lock A", code, out, errb, verifyLockProblem,
			fx.lockPath+" is not approved: invalid signatures", "invalid: the bundle signs another artefact")
	})

	// After all that, the reviewed lock and its signature are approved.
	code, out, errb := runMcpform(t, "show", "-lock", fx.lockPath, "-trust", trust)
	wantRun(t, "show, restored", code, out, errb, exitOK, fx.lockPath+": approved by "+sigSubject)
}

// TestSigstoreKeyBasedApproval: a bundle signed with a key (cosign
// sign-blob --key) approves the lock for a trust file naming that key's
// cosign.pub, and not for one naming another key.
func TestSigstoreKeyBasedApproval(t *testing.T) {
	fx := newSigstoreFixture(t)
	key := sigstoretest.NewP256Key(t)
	pub := sigstoretest.PublicKeyPEM(t, key.Public())
	id, err := approval.ParsePublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	signer := "key:" + id.KeyID
	fx.writeTrustFile(t, "cosign.pub", string(pub))
	trust := fx.trust(t, "trust.hcl", `  public_key = "cosign.pub"`)
	fx.writeTrustFile(t, "other.pub", string(sigstoretest.PublicKeyPEM(t, sigstoretest.NewP256Key(t).Public())))
	other := fx.trust(t, "other.hcl", `  public_key = "other.pub"`)
	bundle := fx.writeBundle(t, "bundle.json", fx.ts.KeyBundle(t, key, fx.payload(t, fx.lockPath)))

	code, out, errb := runMcpform(t, "sign", "-import", bundle, "-trust", other, fx.lockPath)
	wantRun(t, "sign -import, another key", code, out, errb, exitError, "Error: the bundle does not verify with public key SHA256:")
	if _, err := os.Stat(approval.Path(fx.lockPath)); !os.IsNotExist(err) {
		t.Fatalf("a refused import wrote the signature file: %v", err)
	}

	code, out, errb = runMcpform(t, "sign", "-import", bundle, "-trust", trust, fx.lockPath)
	wantRun(t, "sign -import", code, out, errb, exitOK, "as "+signer+" with sigstore "+signer, "Approvals: approved by "+signer+" (1 of 1 required")
	code, out, errb = runMcpform(t, "show", "-lock", fx.lockPath, "-trust", trust)
	wantRun(t, "show", code, out, errb, exitOK, fx.lockPath+": approved by "+signer+" (1 of 1 required")

	code, out, errb = runMcpform(t, "verify", "-lock", fx.lockPath, "-trust", other)
	// A key the trust file does not list cannot be verified without it:
	// the signature does not count (not-allowed), and is not called forged.
	wantRun(t, "verify, another key", code, out, errb, verifyLockProblem,
		fx.lockPath+" is not approved: not approved: 0 of 1 required approvals", "not-allowed: the bundle does not verify with public key SHA256:")
	if strings.Contains(out+errb, "approved by") {
		t.Errorf("verify, another key: says approved by\n%s%s", out, errb)
	}
}
