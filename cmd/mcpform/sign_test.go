package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/mcpform/mcpform/approval"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/policy"
)

// signFixture is a directory with a lock of one server whose sandbox
// allows no network, an SSH key, and a private trust file requiring its
// signature.
type signFixture struct {
	dir, lockPath, key, trust string
}

func newSignFixture(t *testing.T) signFixture {
	t.Helper()
	dir := t.TempDir()
	fx := signFixture{dir: dir, lockPath: filepath.Join(dir, "mcp.lock"), key: filepath.Join(dir, "id_ed25519")}
	writeTestLock(t, fx.lockPath, []string{})

	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fx.key, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	trustDir := filepath.Join(dir, "trust")
	if err := os.Mkdir(trustDir, 0o700); err != nil {
		t.Fatal(err)
	}
	line := "alice@example.com " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sshPub))) + "\n"
	if err := os.WriteFile(filepath.Join(trustDir, "allowed_signers"), []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	fx.trust = filepath.Join(trustDir, "trust.hcl")
	if err := os.WriteFile(fx.trust, []byte("allowed_signers = \"allowed_signers\"\nrequired = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return fx
}

// writeTestLock writes a lock whose server "notes" may reach allow.
func writeTestLock(t *testing.T, path string, allow []string) {
	t.Helper()
	e := &lock.Entry{
		Command:         []string{"/bin/true"},
		EnvPassthrough:  []string{},
		ProtocolVersion: "2025-11-25",
		ServerInfo:      json.RawMessage(`{"name":"notes","version":"1.0.0"}`),
		Capabilities:    json.RawMessage(`{"tools":{}}`),
		Policy:          &policy.Policy{Sandbox: &policy.Sandbox{Filesystem: policy.Filesystem{Read: []string{}, Write: []string{}}, Network: policy.Network{Allow: allow}}},
	}
	if err := e.Seal(); err != nil {
		t.Fatal(err)
	}
	data, err := lock.Marshal(&lock.File{Generator: "mcpform test", Servers: map[string]*lock.Entry{"notes": e}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// run runs mcpform with args (paths absolute: -chdir would move every
// test's working directory).
func (fx signFixture) run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	io := &stdio{in: strings.NewReader(""), out: &out, err: &errb, getenv: func(string) string { return "" }}
	code := run(context.Background(), args, io)
	return code, out.String(), errb.String()
}

// TestForgedLockWithRecomputedDigests is the attack signatures exist for:
// someone who can write mcp.lock opens the sandbox's network and
// recomputes every digest, so the lock loads as a good one (the control:
// show accepts it, as every command did before signatures). Signed by
// the reviewer before, the forged lock is refused by verify, with or
// without a trust file, and a signature copied from it to another lock
// does not approve that one.
func TestForgedLockWithRecomputedDigests(t *testing.T) {
	fx := newSignFixture(t)
	if code, out, errb := fx.run(t, "sign", "-key", fx.key, "-signer", "alice@example.com", fx.lockPath); code != exitOK {
		t.Fatalf("sign: %d\n%s%s", code, out, errb)
	}
	if code, out, errb := fx.run(t, "verify", "-lock", fx.lockPath, "-trust", fx.trust, "-json", "NOPE"); code != verifyLockProblem || !strings.Contains(errb, `no server "NOPE"`) {
		t.Fatalf("verify NOPE: %d\n%s%s", code, out, errb)
	}
	reviewed, err := os.ReadFile(fx.lockPath)
	if err != nil {
		t.Fatal(err)
	}
	writeTestLock(t, fx.lockPath, []string{"evil.example.com:443"}) // the forgery, digests and all
	if code, out, errb := fx.run(t, "show", "-lock", fx.lockPath); code != exitOK || !strings.Contains(out, "evil.example.com:443") {
		t.Fatalf("control: the forged lock does not load as a good one: %d\n%s%s", code, out, errb)
	}
	for _, args := range [][]string{{"verify", "-lock", fx.lockPath, "-trust", fx.trust}, {"verify", "-lock", fx.lockPath}} {
		code, out, errb := fx.run(t, args...)
		if code != verifyLockProblem || !strings.Contains(errb, "mcp.lock is not approved: invalid signatures") ||
			!strings.Contains(errb, `signature 1 by "alice@example.com" (ssh SHA256:`) || !strings.Contains(errb, "invalid: it is over another lock") {
			t.Errorf("%v on the forged lock: exit %d\n%s%s", args, code, out, errb)
		}
	}
	// The signature copied to another lock: the reviewed lock's
	// signature, its lockDigest rewritten to the forged lock's.
	sigs, err := approval.Load(approval.Path(fx.lockPath))
	if err != nil {
		t.Fatal(err)
	}
	forged, _ := os.ReadFile(fx.lockPath)
	payload, _ := approval.Payload(forged)
	sigs.Signatures[0].LockDigest = approval.Digest(payload)
	if err := approval.Save(approval.Path(fx.lockPath), sigs); err != nil {
		t.Fatal(err)
	}
	if code, out, errb := fx.run(t, "verify", "-lock", fx.lockPath, "-trust", fx.trust); code != verifyLockProblem || !strings.Contains(errb, "the signature does not verify") {
		t.Errorf("a signature copied to the forged lock: exit %d\n%s%s", code, out, errb)
	}
	// Restored, it is valid again: the refusals were the forgery's.
	if err := os.WriteFile(fx.lockPath, reviewed, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errb := fx.run(t, "sign", "-key", fx.key, "-trust", fx.trust, fx.lockPath); code != exitOK || !strings.Contains(out, "Approvals: approved by alice@example.com (1 of 1 required") {
		t.Fatalf("signing the restored lock: %d\n%s%s", code, out, errb)
	}
	if code, out, errb := fx.run(t, "show", "-lock", fx.lockPath, "-trust", fx.trust); code != exitOK || !strings.Contains(errb, "mcp.lock: approved by alice@example.com") {
		t.Fatalf("show: %d\n%s%s", code, out, errb)
	}
}

// TestSignFlagErrors: sign and apply's mistakes are errors that say what
// to do, and a failed sign writes no signature file. (The forged plan
// file: testdata/script/sign_review_flow.txtar.)
func TestSignFlagErrors(t *testing.T) {
	fx := newSignFixture(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sign", "-key", fx.key, fx.lockPath}, "say who signs with -signer NAME"},
		{[]string{"sign", "-key", filepath.Join(fx.dir, "nope"), fx.lockPath}, "no such file"},
		{[]string{"sign", "-import", fx.key, "-key", fx.key, fx.lockPath}, "use one"},
		{[]string{"sign", "-trust", filepath.Join(fx.dir, "missing.hcl"), "-key", fx.key, fx.lockPath}, "does not exist"},
		{[]string{"apply", "-require-signatures"}, "-require-signatures checks a saved plan's approvals"},
	} {
		code, out, errb := fx.run(t, c.args...)
		if code != exitError || !strings.Contains(errb, c.want) {
			t.Errorf("%v: exit %d, want 1 with %q\n%s%s", c.args, code, c.want, out, errb)
		}
	}
	if _, err := os.Stat(approval.Path(fx.lockPath)); !os.IsNotExist(err) {
		t.Fatalf("a failed sign wrote the signature file: %v", err)
	}
}

// TestClientConfigTrust: client-config -trust writes -trust FILE (made
// absolute) into every launch, refuses a trust file that does not load,
// and warns of one kept beside the lock.
func TestClientConfigTrust(t *testing.T) {
	fx := newSignFixture(t)
	code, out, errb := fx.run(t, "client-config", "-client", "claude", "-mcpform", "/opt/mcpform", "-lock", fx.lockPath, "-trust", fx.trust)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	want := `"args": ["run", "-trust", "` + fx.trust + `", "-lock", "` + fx.lockPath + `", "notes"]`
	if !strings.Contains(out, want) {
		t.Fatalf("the launch lacks -trust:\n%s", out)
	}
	if !strings.Contains(errb, "is beside the lock") {
		t.Errorf("no warning for a trust file in the lock's directory:\n%s", errb)
	}
	outside := newSignFixture(t)
	if _, _, errb := fx.run(t, "client-config", "-client", "claude", "-mcpform", "/opt/mcpform", "-lock", fx.lockPath, "-trust", outside.trust); strings.Contains(errb, "beside the lock") {
		t.Errorf("a warning for a trust file elsewhere:\n%s", errb)
	}
	code, out, errb = fx.run(t, "client-config", "-client", "claude", "-mcpform", "/opt/mcpform", "-lock", fx.lockPath, "-trust", filepath.Join(fx.dir, "nope.hcl"))
	if code != exitError || !strings.Contains(errb, "does not exist") || out != "" {
		t.Fatalf("a missing trust file: exit %d\n%s%s", code, out, errb)
	}
}
