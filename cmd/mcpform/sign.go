package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/term"

	"github.com/mcpform/mcpform/approval"
	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/pins/provenance"
	"github.com/mcpform/mcpform/plan"
)

type signFlags struct {
	key     string
	signer  string
	imp     string
	payload bool
	trust   string
	target  string
}

func parseSignFlags(args []string, stderr io.Writer) (signFlags, error) {
	var f signFlags
	fs := newFlagSet("sign", stderr, `Usage: mcpform sign [-key FILE] [-signer NAME] [LOCK|PLANFILE]
       mcpform sign -import FILE [-signer NAME] [LOCK|PLANFILE]
       mcpform sign -payload [LOCK|PLANFILE]

Approves a lock: signs its canonical content (RFC 8785) with an SSH key and adds the
signature to LOCK.sig beside it (default mcp.lock and mcp.lock.sig). Signing a plan
saved by mcpform plan -out signs the lock that plan would write, into PLANFILE.sig;
mcpform apply PLANFILE carries those signatures into mcp.lock.sig.

The key is -key: a private key file (a passphrase is asked on the terminal), or a
public key file whose private key the SSH agent ($SSH_AUTH_SOCK) holds; without -key,
the agent's only key. -signer is who you are: the principal allowed_signers lists for
your key (default: the trust file's name for the key, if it lists one).

-payload prints the bytes a signature signs, for signing elsewhere:
  mcpform sign -payload > lock.payload
  ssh-keygen -Y sign -n mcpform -f ~/.ssh/id_ed25519 lock.payload   # or:
  cosign sign-blob --bundle lock.bundle lock.payload                # Sigstore, keyless in CI
and -import adds such a signature (lock.payload.sig) or bundle (lock.bundle).
`)
	fs.StringVar(&f.key, "key", "", "the SSH key to sign with: a private key file, or a .pub file of a key in the agent")
	fs.StringVar(&f.signer, "signer", "", "who signs: the principal allowed_signers names for the key (e.g. alice@example.com)")
	fs.StringVar(&f.imp, "import", "", "add a signature made elsewhere: ssh-keygen -Y sign -n mcpform's .sig, or a Sigstore bundle")
	fs.BoolVar(&f.payload, "payload", false, "print the bytes a signature signs (the lock's canonical form) and exit")
	registerTrust(fs, &f.trust)
	if err := parseArgs(fs, args); err != nil {
		return f, err
	}
	var err error
	if f.target, err = optionalArg(fs, stderr, lock.DefaultPath, "a lock or a saved plan"); err != nil {
		return f, err
	}
	if f.imp != "" && f.key != "" {
		return f, usageFailure(fs, stderr, "mcpform sign: -import adds a signature made elsewhere; -key signs here: use one")
	}
	return f, nil
}

// signedLock reads what sign signs at path: a lock, verified as every
// command verifies it, or the lock a saved plan would write.
func signedLock(path string) ([]byte, string, error) {
	if sniffFile(path) == planFile {
		p, err := plan.ReadFile(path)
		if err != nil {
			return nil, "", err
		}
		return p.PlannedLock, "the lock planned in " + path, nil
	}
	_, data, err := lock.LoadBytes(path)
	return data, path, err
}

func runSign(_ context.Context, io *stdio, f signFlags) int {
	lockData, what, err := signedLock(f.target)
	if err != nil {
		return fail(io, err)
	}
	payload, err := approval.Payload(lockData)
	if err != nil {
		return fail(io, err)
	}
	if f.payload {
		io.out.Write(payload)
		return exitOK
	}
	pol, err := trustPolicy(io, f.trust)
	if err != nil {
		return fail(io, err)
	}
	sigPath := approval.Path(f.target)
	sigs, err := approval.Load(sigPath)
	if err != nil {
		return fail(io, err)
	}
	var sig approval.Signature
	if f.imp != "" {
		sig, err = importSignature(f, payload, lockData, pol)
	} else {
		sig, err = signHere(io, f, payload, pol)
	}
	if err != nil {
		return fail(io, err)
	}
	digest := approval.Digest(payload)
	if stale := len(sigs.Signatures) - len(sigs.Over(digest)); stale > 0 {
		fmt.Fprintf(io.err, "Note: removed %d signature(s) over another lock from %s: they approved what the file held before.\n", stale, sigPath)
		sigs.Signatures = sigs.Over(digest)
	}
	sigs.Add(sig)
	if err := approval.Save(sigPath, sigs); err != nil {
		return fail(io, err)
	}
	fmt.Fprintf(io.out, "Signed %s (%s) as %s with %s %s; %s holds %d signature(s).\n",
		what, digest, escape.String(sig.Signer), sig.Kind, escape.String(sig.Key), sigPath, len(sigs.Signatures))
	if r, err := approvals(pol, sigPath, lockData); err == nil {
		fmt.Fprintf(io.out, "Approvals: %s\n", r.Summary())
		for _, p := range r.Problems() {
			fmt.Fprintf(io.out, "  %s\n", p)
		}
	}
	return exitOK
}

// signHere signs with an SSH key from -key or the agent.
func signHere(io *stdio, f signFlags, payload []byte, pol *approval.Policy) (approval.Signature, error) {
	sock := io.getenv("SSH_AUTH_SOCK")
	var signer ssh.Signer
	var err error
	if f.key != "" {
		signer, err = approval.KeySigner(f.key, sock, passphrasePrompt(io, f.key))
	} else {
		signer, err = approval.AgentSigner(sock, nil)
	}
	if err != nil {
		return approval.Signature{}, err
	}
	principal, err := principalFor(f.signer, ssh.FingerprintSHA256(signer.PublicKey()), pol)
	if err != nil {
		return approval.Signature{}, err
	}
	return approval.SignSSH(payload, signer, principal, time.Now())
}

// importSignature adds an SSH signature or a Sigstore bundle made over the
// payload elsewhere, checking it first.
func importSignature(f signFlags, payload, lockData []byte, pol *approval.Policy) (approval.Signature, error) {
	data, err := os.ReadFile(f.imp)
	if err != nil {
		return approval.Signature{}, err
	}
	if len(data) > 0 && data[0] == '{' {
		trusted := pol.TrustedMaterial()
		if trusted == nil {
			if trusted, _, err = provenance.TrustedRoot(); err != nil {
				return approval.Signature{}, err
			}
		}
		return approval.SigstoreSignature(data, lockData, trusted, pol.SigstoreKeys(), time.Now())
	}
	sig, err := approval.ImportSSH(data, payload, "unnamed", time.Now())
	if err != nil {
		return sig, fmt.Errorf("%s: %w", f.imp, err)
	}
	if sig.Signer, err = principalFor(f.signer, sig.Key, pol); err != nil {
		return sig, err
	}
	return sig, nil
}

// principalFor is who signs with the key: -signer, else the one name the
// trust policy lists for it.
func principalFor(flagValue, fingerprint string, pol *approval.Policy) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	if name := pol.PrincipalOf(fingerprint); name != "" {
		return name, nil
	}
	return "", fmt.Errorf("say who signs with -signer NAME: the principal allowed_signers lists for key %s (e.g. alice@example.com)", fingerprint)
}

// passphrasePrompt asks for the key's passphrase on the terminal (never
// from a flag or the environment); nil without one.
func passphrasePrompt(io *stdio, key string) func() ([]byte, error) {
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil
	}
	if !term.IsTerminal(int(tty.Fd())) {
		tty.Close()
		return nil
	}
	return func() ([]byte, error) {
		defer tty.Close()
		fmt.Fprintf(tty, "Enter passphrase for %s: ", key)
		pass, err := term.ReadPassword(int(tty.Fd()))
		fmt.Fprintln(tty)
		if err != nil {
			return nil, fmt.Errorf("reading the passphrase: %w", err)
		}
		if len(pass) == 0 {
			return nil, errors.New("no passphrase given")
		}
		return pass, nil
	}
}
