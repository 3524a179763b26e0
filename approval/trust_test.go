package approval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeTrust writes a trust file and its allowed_signers into a private
// directory and returns the trust file's path.
func writeTrust(t *testing.T, trust string, allowed ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "mcpform")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "allowed_signers"), []byte(strings.Join(allowed, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "trust.hcl")
	if err := os.WriteFile(p, []byte(trust), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadPolicy(t *testing.T) {
	k := signers(t, 2)
	p := writeTrust(t, `
# trust.hcl
allowed_signers = "allowed_signers"
required        = 2
revoked         = ["SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"]
sigstore {
  issuer  = "https://token.actions.githubusercontent.com"
  subject = "https://github.com/acme/mcp-config/.github/workflows/sign.yml@refs/heads/main"
}
sigstore {
  issuer        = "https://accounts.google.com"
  subject_regex = ".*@acme[.]com"
}
`, "alice@example.com "+k[0].line, "bob@example.com "+k[1].line)
	pol, err := LoadPolicy(p)
	if err != nil {
		t.Fatal(err)
	}
	if pol.Required != 2 || len(pol.Signers) != 2 || len(pol.Sigstore) != 2 || len(pol.Revoked) != 1 || pol.Source != p {
		t.Fatalf("%+v", pol)
	}
	if !pol.Sigstore[1].allows(SigstoreSigner{Issuer: "https://accounts.google.com", Subject: "ci@acme.com"}) ||
		pol.Sigstore[1].allows(SigstoreSigner{Issuer: "https://accounts.google.com", Subject: "ci@acme.com.evil.example"}) {
		t.Fatal("subject_regex must match the whole subject")
	}
	r := Check(lockPayload(t, lockJSON), sigs(sign(t, k[0], "alice@example.com", lockJSON), sign(t, k[1], "bob@example.com", lockJSON)), pol, CheckOptions{Now: time.Now()})
	if r.State != Valid {
		t.Fatalf("%s %+v", r.State, r.Findings)
	}
}

func TestLoadPolicyRefuses(t *testing.T) {
	k := signers(t, 1)
	line := "alice@example.com " + k[0].line
	cases := []struct {
		name, trust string
		allowed     []string
		want        string
	}{
		{"no signers", `required = 1`, nil, "names no signers"},
		{"required zero", `allowed_signers = "allowed_signers"` + "\nrequired = 0", []string{line}, "at least 1"},
		{"required beyond the signers", `allowed_signers = "allowed_signers"` + "\nrequired = 2", []string{line, "alice2@example.com " + k[0].line}, "no lock could meet it"},
		{"unknown setting", `allowed_signers = "allowed_signers"` + "\nrequire = 2", []string{line}, `"require" is not expected`},
		{"a variable", `allowed_signers = var.x`, []string{line}, "Variables not allowed"},
		{"a bad allowed_signers line", `allowed_signers = "allowed_signers"`, []string{"alice@example.com ssh-ed25519 AAAA!!"}, "line 1"},
		{"cert-authority", `allowed_signers = "allowed_signers"`, []string{"*@example.com cert-authority " + k[0].line}, "cert-authority is not supported"},
		{"a missing allowed_signers", `allowed_signers = "nope"`, nil, "does not exist"},
		{"a bad revoked entry", `allowed_signers = "allowed_signers"` + "\nrevoked = [\"md5:00\"]", []string{line}, "not a SHA256 key fingerprint"},
		{"sigstore without issuer", `sigstore { subject = "x" }`, nil, "issuer is required"},
		{"sigstore without subject", `sigstore { issuer = "https://x" }`, nil, "subject (or subject_regex) is required"},
		{"sigstore with both", `sigstore {` + "\n" + `issuer = "https://x"` + "\n" + `subject = "a"` + "\n" + `subject_regex = "a"` + "\n}", nil, "not both"},
		{"a bad pattern", `sigstore {` + "\n" + `issuer = "https://x"` + "\n" + `subject_regex = "("` + "\n}", nil, "subject_regex"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := LoadPolicy(writeTrust(t, c.trust, c.allowed...)); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}

// TestTrustFileWritableByOthers: like ssh with authorized_keys, a trust
// file (or allowed_signers, or their directory) another user can write is
// refused; the control is the same files private.
func TestTrustFileWritableByOthers(t *testing.T) {
	k := signers(t, 1)
	for _, target := range []string{"trust.hcl", "allowed_signers", "."} {
		for _, mode := range []os.FileMode{0o002, 0o020} {
			p := writeTrust(t, `allowed_signers = "allowed_signers"`, "alice@example.com "+k[0].line)
			if _, err := LoadPolicy(p); err != nil {
				t.Fatalf("control: %v", err)
			}
			f := filepath.Join(filepath.Dir(p), target)
			fi, err := os.Stat(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(f, fi.Mode().Perm()|mode); err != nil {
				t.Fatal(err)
			}
			if _, err := LoadPolicy(p); err == nil || !strings.Contains(err.Error(), "writable by others") {
				t.Errorf("%s with mode +%o: %v", target, mode, err)
			}
		}
	}
}

func TestLocate(t *testing.T) {
	cfg := t.TempDir()
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	env["XDG_CONFIG_HOME"] = cfg
	if p, explicit, err := Locate("", getenv); err != nil || explicit || (p != "" && p != SystemTrust) {
		t.Fatalf("no trust file: %q %v %v", p, explicit, err)
	}
	user := filepath.Join(cfg, "mcpform", "trust.hcl")
	if err := os.MkdirAll(filepath.Dir(user), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(user, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if p, explicit, _ := Locate("", getenv); p != user || explicit {
		t.Fatalf("the user's file: %q %v", p, explicit)
	}
	env[EnvTrust] = "/from/env.hcl"
	if p, explicit, _ := Locate("", getenv); p != "/from/env.hcl" || !explicit {
		t.Fatalf("MCPFORM_TRUST: %q %v", p, explicit)
	}
	if p, explicit, _ := Locate("/from/flag.hcl", getenv); p != "/from/flag.hcl" || !explicit {
		t.Fatalf("-trust: %q %v", p, explicit)
	}
	// A file named explicitly must exist.
	if _, err := LoadPolicy(filepath.Join(cfg, "missing.hcl")); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("a missing explicit trust file: %v", err)
	}
}

func FuzzParsePolicy(f *testing.F) {
	f.Add([]byte(`allowed_signers = "a"` + "\nrequired = 2\n"))
	f.Add([]byte("sigstore {\n issuer = \"https://x\"\n subject_regex = \".*\"\n}\n"))
	f.Add([]byte(`revoked = ["SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		pol, err := parsePolicy(data, "trust.hcl", func(string) ([]byte, error) { return nil, os.ErrNotExist })
		if err == nil && (pol.Required < 1 || len(pol.Signers)+len(pol.Sigstore) == 0) {
			t.Fatalf("an unusable policy loaded: %+v", pol)
		}
	})
}
