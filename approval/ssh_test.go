package approval

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

// lockJSON is a small lock, indented as the writer writes it.
const lockJSON = `{
  "lockfileVersion": 1,
  "generator": "mcpform test",
  "servers": {}
}
`

// needSSHKeygen skips where openssh-client is not installed; the test
// command (scripts/test.sh) installs it, and in CI a skip is a failure.
func needSSHKeygen(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("ssh-keygen")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("ssh-keygen is not installed; scripts/test.sh installs openssh-client")
		}
		t.Skip("ssh-keygen is not installed (apt-get install openssh-client)")
	}
	return p
}

// testKey is a key ssh-keygen made, and its files.
type testKey struct {
	priv, pub string
	signer    ssh.Signer
	line      string // authorized_keys form of the public key
}

func newKey(t testing.TB, dir, name, kind string, args ...string) testKey {
	t.Helper()
	needSSHKeygen(t)
	priv := filepath.Join(dir, name)
	argv := append([]string{"-q", "-t", kind, "-N", "", "-C", name + "@example.com", "-f", priv}, args...)
	if out, err := exec.Command("ssh-keygen", argv...).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen %v: %v\n%s", argv, err, out)
	}
	signer, err := KeySigner(priv, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := os.ReadFile(priv + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	return testKey{priv: priv, pub: priv + ".pub", signer: signer, line: strings.TrimSpace(string(pub))}
}

func lockPayload(t testing.TB, lockData string) []byte {
	t.Helper()
	p, err := Payload([]byte(lockData))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// sshKeygenVerify runs ssh-keygen -Y verify for principal over payload.
func sshKeygenVerify(t *testing.T, dir, allowed, principal, armored string, payload []byte) error {
	t.Helper()
	sigFile := filepath.Join(dir, "lock.sig.pem")
	if err := os.WriteFile(sigFile, []byte(armored), 0o600); err != nil {
		t.Fatal(err)
	}
	allowedFile := filepath.Join(dir, "allowed_signers")
	if err := os.WriteFile(allowedFile, []byte(allowed), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ssh-keygen", "-Y", "verify", "-f", allowedFile, "-I", principal, "-n", Namespace, "-s", sigFile)
	cmd.Stdin = bytes.NewReader(payload)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	return nil
}

var keyKinds = []struct {
	name, kind string
	args       []string
}{
	{"ed25519", "ed25519", nil},
	{"ecdsa", "ecdsa", []string{"-b", "256"}},
	{"rsa", "rsa", []string{"-b", "3072"}},
}

// TestMcpformSignsSSHKeygenVerifies signs with mcpform and verifies with
// ssh-keygen -Y verify itself; the control is the same signature over a
// lock one byte different, which ssh-keygen refuses.
func TestMcpformSignsSSHKeygenVerifies(t *testing.T) {
	for _, k := range keyKinds {
		t.Run(k.name, func(t *testing.T) {
			dir := t.TempDir()
			key := newKey(t, dir, "alice", k.kind, k.args...)
			payload := lockPayload(t, lockJSON)
			sig, err := SignSSH(payload, key.signer, "alice@example.com", time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if got := formatOf(t, sig); k.kind == "rsa" && got != ssh.KeyAlgoRSASHA512 {
				t.Errorf("an RSA key signed with %s, want rsa-sha2-512", got)
			}
			allowed := "alice@example.com namespaces=\"mcpform\" " + key.line + "\n"
			if err := sshKeygenVerify(t, dir, allowed, "alice@example.com", sig.SSHSig, payload); err != nil {
				t.Fatalf("ssh-keygen refused mcpform's signature: %v", err)
			}
			other := lockPayload(t, strings.Replace(lockJSON, "mcpform test", "mcpform tesu", 1))
			if err := sshKeygenVerify(t, dir, allowed, "alice@example.com", sig.SSHSig, other); err == nil {
				t.Fatal("control: ssh-keygen accepted the signature over another lock")
			}
		})
	}
}

func formatOf(t *testing.T, s Signature) string {
	t.Helper()
	sig, err := sshsig.Unarmor([]byte(s.SSHSig))
	if err != nil {
		t.Fatal(err)
	}
	return sig.Signature.Format
}

// TestSSHKeygenSignsMcpformVerifies signs with ssh-keygen -Y sign -n
// mcpform and checks the imported signature with mcpform; a signature
// ssh-keygen made in git's namespace is refused.
func TestSSHKeygenSignsMcpformVerifies(t *testing.T) {
	for _, k := range keyKinds {
		t.Run(k.name, func(t *testing.T) {
			dir := t.TempDir()
			key := newKey(t, dir, "bob", k.kind, k.args...)
			payload := lockPayload(t, lockJSON)
			armored := sshKeygenSign(t, dir, key.priv, Namespace, payload)
			sig, err := ImportSSH(armored, payload, "bob@example.com", time.Now())
			if err != nil {
				t.Fatal(err)
			}
			pol := policyFor(t, 1, "bob@example.com "+key.line)
			r := Check(payload, &File{Version: 1, Signatures: []Signature{sig}}, pol, CheckOptions{Now: time.Now()})
			if r.State != Valid || len(r.Approvers) != 1 || r.Approvers[0] != "bob@example.com" {
				t.Fatalf("state %s, approvers %v, findings %+v", r.State, r.Approvers, r.Findings)
			}
			gitSig := sshKeygenSign(t, dir, key.priv, "git", payload)
			if _, err := ImportSSH(gitSig, payload, "bob@example.com", time.Now()); err == nil || !strings.Contains(err.Error(), `namespace "git"`) {
				t.Fatalf("a signature in git's namespace: %v", err)
			}
		})
	}
}

func sshKeygenSign(t *testing.T, dir, priv, namespace string, payload []byte) []byte {
	t.Helper()
	msg := filepath.Join(dir, "payload-"+namespace)
	if err := os.WriteFile(msg, payload, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("ssh-keygen", "-q", "-Y", "sign", "-n", namespace, "-f", priv, msg).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen -Y sign: %v\n%s", err, out)
	}
	armored, err := os.ReadFile(msg + ".sig")
	if err != nil {
		t.Fatal(err)
	}
	return armored
}

// TestAgentHeldKey signs with a key only the real ssh-agent holds,
// through its .pub file, and through the agent's only key.
func TestAgentHeldKey(t *testing.T) {
	needSSHKeygen(t)
	if _, err := exec.LookPath("ssh-agent"); err != nil {
		t.Skip("ssh-agent is not installed")
	}
	dir := t.TempDir()
	key := newKey(t, dir, "carol", "ed25519")
	sock := filepath.Join(dir, "agent.sock")
	agentCmd := exec.Command("ssh-agent", "-D", "-a", sock)
	if err := agentCmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { agentCmd.Process.Kill(); agentCmd.Wait() })
	for i := 0; ; i++ {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if i == 100 {
			t.Fatal("ssh-agent did not create its socket")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := AgentSigner(sock, nil); err == nil || !strings.Contains(err.Error(), "holds no keys") {
		t.Fatalf("an empty agent: %v", err)
	}
	add := exec.Command("ssh-add", key.priv)
	add.Env = append(os.Environ(), "SSH_AUTH_SOCK="+sock)
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("ssh-add: %v\n%s", err, out)
	}
	// The private key file is gone: only the agent can sign.
	if err := os.Remove(key.priv); err != nil {
		t.Fatal(err)
	}
	payload := lockPayload(t, lockJSON)
	for name, get := range map[string]func() (ssh.Signer, error){
		"pub file": func() (ssh.Signer, error) { return KeySigner(key.pub, sock, nil) },
		"only key": func() (ssh.Signer, error) { return AgentSigner(sock, nil) },
	} {
		signer, err := get()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		sig, err := SignSSH(payload, signer, "carol@example.com", time.Now())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := sshKeygenVerify(t, dir, "carol@example.com "+key.line+"\n", "carol@example.com", sig.SSHSig, payload); err != nil {
			t.Fatalf("%s: ssh-keygen refused the agent's signature: %v", name, err)
		}
	}
	other := newKey(t, dir, "dave", "ed25519")
	if _, err := KeySigner(other.pub, sock, nil); err == nil || !strings.Contains(err.Error(), "does not hold key") {
		t.Fatalf("a key the agent lacks: %v", err)
	}
	if _, err := AgentSigner("", nil); err == nil || !strings.Contains(err.Error(), "SSH_AUTH_SOCK") {
		t.Fatalf("no agent: %v", err)
	}
}

// TestEncryptedKeyAsksPassphrase decrypts a key with the passphrase the
// prompt returns, and refuses it without a prompt.
func TestEncryptedKeyAsksPassphrase(t *testing.T) {
	needSSHKeygen(t)
	dir := t.TempDir()
	priv := filepath.Join(dir, "enc")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "s3cret", "-f", priv).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	asked := 0
	s, err := KeySigner(priv, "", func() ([]byte, error) { asked++; return []byte("s3cret"), nil })
	if err != nil || asked != 1 || s == nil {
		t.Fatalf("signer %v, err %v, asked %d", s, err, asked)
	}
	if _, err := KeySigner(priv, "", func() ([]byte, error) { return []byte("wrong"), nil }); err == nil {
		t.Fatal("a wrong passphrase decrypted the key")
	}
	if _, err := KeySigner(priv, "", nil); err == nil || !strings.Contains(err.Error(), "no terminal") {
		t.Fatalf("no prompt: %v", err)
	}
	if _, err := KeySigner(priv, "", func() ([]byte, error) { return nil, errors.New("cancelled") }); err == nil || !strings.Contains(err.Error(), "cancelled") {
		t.Fatalf("a cancelled prompt: %v", err)
	}
}

// policyFor is a policy of the allowed_signers lines, requiring required.
func policyFor(t testing.TB, required int, lines ...string) *Policy {
	t.Helper()
	signers, err := ParseAllowedSigners([]byte(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	return &Policy{Source: "trust.hcl", Required: required, Signers: signers, Revoked: map[string]bool{}}
}
