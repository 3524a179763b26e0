package approval

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// SignSSH signs the payload (Payload of a lock) with signer, in the
// mcpform namespace with SHA-512 (ssh-keygen -Y sign's defaults; an RSA
// key signs with rsa-sha2-512), as principal.
func SignSSH(payload []byte, signer ssh.Signer, principal string, now time.Time) (Signature, error) {
	sig, err := sshsig.Sign(bytes.NewReader(payload), signer, sshsig.HashSHA512, Namespace)
	if err != nil {
		return Signature{}, fmt.Errorf("signing: %w", err)
	}
	return sshEntry(sig, payload, principal, now)
}

// ImportSSH makes the entry for a signature ssh-keygen -Y sign -n mcpform
// made over the payload (an armored SSH SIGNATURE), checking it first.
func ImportSSH(armored, payload []byte, principal string, now time.Time) (Signature, error) {
	sig, err := sshsig.Unarmor(armored)
	if err != nil {
		return Signature{}, fmt.Errorf("not an SSH signature: %w", err)
	}
	e, err := sshEntry(sig, payload, principal, now)
	if err != nil {
		return e, err
	}
	if _, err := verifySSH(e, payload); err != nil {
		return Signature{}, err
	}
	return e, nil
}

func sshEntry(sig *sshsig.Signature, payload []byte, principal string, now time.Time) (Signature, error) {
	e := Signature{
		Kind:       KindSSH,
		Signer:     principal,
		Key:        ssh.FingerprintSHA256(sig.PublicKey),
		LockDigest: Digest(payload),
		SignedAt:   now.UTC().Format(time.RFC3339),
		SSHSig:     string(sshsig.Armor(sig)),
	}
	return e, e.check()
}

// verifySSH checks an ssh entry's signature over payload: in mcpform's
// namespace, by the key the entry names, with SHA-256 or SHA-512 and never
// SHA-1 RSA. It returns the key that signed.
func verifySSH(e Signature, payload []byte) (ssh.PublicKey, error) {
	sig, err := sshsig.Unarmor([]byte(e.SSHSig))
	if err != nil {
		return nil, fmt.Errorf("the signature does not parse: %w", err)
	}
	if sig.Namespace != Namespace {
		return nil, fmt.Errorf("the signature is in namespace %q, not %q (made for something else than a lock)", sig.Namespace, Namespace)
	}
	if _, ok := sig.PublicKey.(*ssh.Certificate); ok {
		return nil, errors.New("the signature is by a certificate; mcpform verifies plain keys only")
	}
	if got := ssh.FingerprintSHA256(sig.PublicKey); got != e.Key {
		return nil, fmt.Errorf("the signature is by key %s, not the %s it claims", got, e.Key)
	}
	if sig.Signature.Format == ssh.KeyAlgoRSA {
		return nil, errors.New("the signature is RSA with SHA-1 (ssh-rsa); sign with rsa-sha2-512")
	}
	if err := sshsig.Verify(bytes.NewReader(payload), sig, sig.PublicKey, sig.HashAlgorithm, Namespace); err != nil {
		return nil, fmt.Errorf("the signature does not verify: %w", err)
	}
	return sig.PublicKey, nil
}

// KeySigner returns the signer for -key FILE: a private key file (asking
// passphrase for an encrypted one; passphrase is never a flag), or a public
// key file (FILE.pub, or any file holding one authorized_keys line) whose
// private key is in the SSH agent at agentSock.
func KeySigner(file, agentSock string, passphrase func() ([]byte, error)) (ssh.Signer, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if pub, _, _, _, err := ssh.ParseAuthorizedKey(data); err == nil {
		return AgentSigner(agentSock, pub)
	}
	signer, err := ssh.ParsePrivateKey(data)
	var missing *ssh.PassphraseMissingError
	if errors.As(err, &missing) {
		if passphrase == nil {
			return nil, fmt.Errorf("%s is encrypted and there is no terminal to ask its passphrase on; add the key to ssh-agent and pass its .pub file", file)
		}
		pass, perr := passphrase()
		if perr != nil {
			return nil, perr
		}
		signer, err = ssh.ParsePrivateKeyWithPassphrase(data, pass)
		clear(pass)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: not an SSH private or public key: %w", file, err)
	}
	return signer, nil
}

// AgentSigner returns the agent's signer for want, or, with want nil, the
// agent's only key (an agent holding several needs -key naming one).
func AgentSigner(agentSock string, want ssh.PublicKey) (ssh.Signer, error) {
	if agentSock == "" {
		return nil, errors.New("SSH_AUTH_SOCK is not set: no SSH agent to sign with; pass -key with a private key file")
	}
	conn, err := net.Dial("unix", agentSock)
	if err != nil {
		return nil, fmt.Errorf("connecting to the SSH agent: %w", err)
	}
	signers, err := agent.NewClient(conn).Signers()
	if err != nil {
		return nil, fmt.Errorf("listing the SSH agent's keys: %w", err)
	}
	var names []string
	for _, s := range signers {
		if want != nil && bytes.Equal(s.PublicKey().Marshal(), want.Marshal()) {
			return s, nil
		}
		names = append(names, ssh.FingerprintSHA256(s.PublicKey()))
	}
	switch {
	case want != nil:
		return nil, fmt.Errorf("the SSH agent does not hold key %s (it holds %s); ssh-add it", ssh.FingerprintSHA256(want), orNone(names))
	case len(signers) == 1:
		return signers[0], nil
	case len(signers) == 0:
		return nil, errors.New("the SSH agent holds no keys; ssh-add one, or pass -key with a private key file")
	}
	return nil, fmt.Errorf("the SSH agent holds %d keys (%s); pass -key with the .pub file of the one to sign with", len(signers), strings.Join(names, ", "))
}

func orNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}
