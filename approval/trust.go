package approval

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/sigstore/sigstore-go/pkg/root"
	"golang.org/x/crypto/ssh"
)

// EnvTrust names the environment variable that points at a trust file.
const EnvTrust = "MCPFORM_TRUST"

// SystemTrust is the system-wide trust file, the last place looked.
const SystemTrust = "/etc/mcpform/trust.hcl"

// maxTrustFile bounds a trust file and the files it names.
const maxTrustFile = 1 << 20

// Locate finds the trust file in force: flag (-trust), else $MCPFORM_TRUST,
// else the user's ($XDG_CONFIG_HOME/mcpform/trust.hcl, or ~/.config), else
// the system's (/etc/mcpform/trust.hcl). A file named by the flag or the
// variable must exist (explicit is true, and LoadPolicy fails without
// it); a default location that does not exist means no policy ("", nil).
func Locate(flag string, getenv func(string) string) (path string, explicit bool, err error) {
	if flag != "" {
		return flag, true, nil
	}
	if v := getenv(EnvTrust); v != "" {
		return v, true, nil
	}
	var defaults []string
	if dir := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(dir) {
		defaults = append(defaults, filepath.Join(dir, "mcpform", "trust.hcl"))
	} else if home := getenv("HOME"); filepath.IsAbs(home) {
		defaults = append(defaults, filepath.Join(home, ".config", "mcpform", "trust.hcl"))
	}
	if runtime.GOOS != "windows" {
		defaults = append(defaults, SystemTrust)
	}
	for _, p := range defaults {
		if _, err := os.Lstat(p); err == nil {
			return p, false, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", false, fmt.Errorf("trust file %s: %w", p, err)
		}
	}
	return "", false, nil
}

// trustFile is the shape of trust.hcl.
type trustFile struct {
	AllowedSigners *string         `hcl:"allowed_signers,optional"`
	Required       *int            `hcl:"required,optional"`
	Revoked        []string        `hcl:"revoked,optional"`
	RevokedKeys    *string         `hcl:"revoked_keys,optional"`
	TrustedRoot    *string         `hcl:"trusted_root,optional"`
	Sigstore       []sigstoreBlock `hcl:"sigstore,block"`
}

type sigstoreBlock struct {
	Issuer       *string `hcl:"issuer,optional"`
	Subject      *string `hcl:"subject,optional"`
	SubjectRegex *string `hcl:"subject_regex,optional"`
	PublicKey    *string `hcl:"public_key,optional"`
}

// LoadPolicy reads the trust file at path and the files it names
// (allowed_signers, revoked_keys, trusted_root, public keys: paths relative
// to the trust file's directory). Like ssh with its authorized_keys, it
// refuses a file that another user could have written: writable by group
// or others, or owned by someone other than the caller or root, or in a
// directory that is.
func LoadPolicy(path string) (*Policy, error) {
	data, err := readTrusted(path)
	if err != nil {
		return nil, err
	}
	pol, err := parsePolicy(data, path, func(name string) ([]byte, error) {
		if !filepath.IsAbs(name) {
			name = filepath.Join(filepath.Dir(path), name)
		}
		return readTrusted(name)
	})
	if err != nil {
		return nil, err
	}
	return pol, nil
}

// parsePolicy reads a trust file's bytes; read reads a file it names.
func parsePolicy(data []byte, path string, read func(string) ([]byte, error)) (*Policy, error) {
	f, diags := hclsyntax.ParseConfig(data, path, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, fmt.Errorf("trust file %s: %s", path, diags.Error())
	}
	var tf trustFile
	if diags := gohcl.DecodeBody(f.Body, nil, &tf); diags.HasErrors() {
		return nil, fmt.Errorf("trust file %s: %s", path, diags.Error())
	}
	pol := &Policy{Source: path, Required: 1, Revoked: map[string]bool{}}
	if tf.Required != nil {
		pol.Required = *tf.Required
	}
	if pol.Required < 1 {
		return nil, fmt.Errorf("trust file %s: required must be at least 1", path)
	}
	if tf.AllowedSigners != nil {
		raw, err := read(*tf.AllowedSigners)
		if err != nil {
			return nil, fmt.Errorf("trust file %s: allowed_signers: %w", path, err)
		}
		if pol.Signers, err = ParseAllowedSigners(raw); err != nil {
			return nil, fmt.Errorf("trust file %s: allowed_signers %s: %w", path, *tf.AllowedSigners, err)
		}
	}
	for _, r := range tf.Revoked {
		if !fingerprintPattern.MatchString(r) {
			return nil, fmt.Errorf("trust file %s: revoked %q is not a SHA256 key fingerprint (ssh-keygen -lf KEY prints it)", path, r)
		}
		pol.Revoked[r] = true
	}
	if tf.RevokedKeys != nil {
		raw, err := read(*tf.RevokedKeys)
		if err != nil {
			return nil, fmt.Errorf("trust file %s: revoked_keys: %w", path, err)
		}
		for n, line := range strings.Split(string(raw), "\n") {
			line = strings.TrimSpace(line)
			if line == "" || line[0] == '#' {
				continue
			}
			key, _, _, _, err := ssh.ParseAuthorizedKey([]byte(line))
			if err != nil {
				return nil, fmt.Errorf("trust file %s: revoked_keys line %d: %w", path, n+1, err)
			}
			pol.Revoked[ssh.FingerprintSHA256(key)] = true
		}
	}
	if tf.TrustedRoot != nil {
		raw, err := read(*tf.TrustedRoot)
		if err != nil {
			return nil, fmt.Errorf("trust file %s: trusted_root: %w", path, err)
		}
		tr, err := root.NewTrustedRootFromJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("trust file %s: trusted_root %s: %w", path, *tf.TrustedRoot, err)
		}
		pol.TrustedRoot = tr
	}
	for i, b := range tf.Sigstore {
		id, err := sigstoreIdentity(b, read)
		if err != nil {
			return nil, fmt.Errorf("trust file %s: sigstore block %d: %w", path, i+1, err)
		}
		pol.Sigstore = append(pol.Sigstore, id)
	}
	if len(pol.Signers) == 0 && len(pol.Sigstore) == 0 {
		return nil, fmt.Errorf("trust file %s names no signers: set allowed_signers, or add a sigstore block", path)
	}
	if possible, bounded := pol.possibleSigners(); bounded && pol.Required > possible {
		return nil, fmt.Errorf("trust file %s requires %d signers and lists %d distinct keys and identities: no lock could meet it", path, pol.Required, possible)
	}
	return pol, nil
}

func sigstoreIdentity(b sigstoreBlock, read func(string) ([]byte, error)) (SigstoreIdentity, error) {
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	if b.PublicKey != nil {
		if b.Issuer != nil || b.Subject != nil || b.SubjectRegex != nil {
			return SigstoreIdentity{}, errors.New("public_key names a key; issuer and subject are for keyless signatures (one or the other)")
		}
		raw, err := read(*b.PublicKey)
		if err != nil {
			return SigstoreIdentity{}, fmt.Errorf("public_key: %w", err)
		}
		return ParsePublicKey(raw)
	}
	id := SigstoreIdentity{Issuer: str(b.Issuer), Subject: str(b.Subject)}
	if id.Issuer == "" {
		return id, errors.New("issuer is required (the OIDC issuer, e.g. https://token.actions.githubusercontent.com)")
	}
	switch {
	case b.Subject != nil && b.SubjectRegex != nil:
		return id, errors.New("set subject or subject_regex, not both")
	case b.SubjectRegex != nil:
		re, err := regexp.Compile(`^(?:` + *b.SubjectRegex + `)$`)
		if err != nil {
			return id, fmt.Errorf("subject_regex: %w", err)
		}
		id.SubjectRegex = re
	case id.Subject == "":
		return id, errors.New("subject (or subject_regex) is required: the certificate identity, e.g. a workflow URL")
	}
	return id, nil
}

// readTrusted reads a file of the trust policy, refusing one another user
// could have written.
func readTrusted(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("trust file %s does not exist; create it, or unset %s / drop -trust", path, EnvTrust)
		}
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if err := safeOwner(path, fi); err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	if di, err := os.Stat(dir); err != nil {
		return nil, err
	} else if err := safeOwner(dir, di); err != nil {
		return nil, err
	}
	if fi.Size() > maxTrustFile {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxTrustFile)
	}
	data := make([]byte, fi.Size())
	if _, err := f.ReadAt(data, 0); err != nil && fi.Size() > 0 {
		return nil, err
	}
	return data, nil
}

// possibleSigners is how many distinct signers the policy could count at
// most (each key counts once), unless a subject pattern makes it unbounded.
func (p *Policy) possibleSigners() (n int, bounded bool) {
	keys := map[string]bool{}
	for _, s := range p.Signers {
		keys[sshKeyID(s.Key)] = true
	}
	n = 0
	for _, id := range p.Sigstore {
		switch {
		case id.SubjectRegex != nil:
			return 0, false
		case id.PublicKey != nil:
			keys["key:"+id.KeyID] = true // an SSH key listed again counts once
		default:
			n++
		}
	}
	return len(keys) + n, true
}
