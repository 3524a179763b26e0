package provenance

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sigstore/sigstore-go/pkg/root"
)

// The real registry's dist.integrity of sigstore 1.3.0 and 2.0.0
// (https://registry.npmjs.org/sigstore/1.3.0, …/2.0.0).
const (
	integrity130 = "sha512-dhdv+jOAi1RgLHw13lxumk3rlgZtumUz9QrCNPTx9MazUnUV3BfAb74oYAMPQQ7uaeogB5vTosbz3POzKbEHUQ=="
	integrity200 = "sha512-RtTi90xIdzFmQAAKb9+Ki1nx4IR2Z5c+mFn3dN0xuPHgk3gTt3f7ZqKsZ9UFQP40ZAlm7un8LMyjhwgrTIXNPA=="
)

func readData(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// answer is the registry's attestations answer for sigstore@version, as
// npm's registry serves it: the provenance and, for 1.3.0, the publish
// attestation.
func answer(t testing.TB, version string) []byte {
	t.Helper()
	type att struct {
		PredicateType string          `json:"predicateType"`
		Bundle        json.RawMessage `json:"bundle"`
	}
	var list []att
	switch version {
	case "1.3.0":
		list = []att{{SLSAv02, readData(t, "sigstore@1.3.0-provenance.sigstore.json")}, {Publish, readData(t, "sigstore@1.3.0-publish.sigstore.json")}}
	case "2.0.0":
		list = []att{{SLSAv1, readData(t, "sigstore@2.0.0-provenance.sigstore.json")}}
	}
	data, err := json.Marshal(map[string]any{"attestations": list})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func parsed(t testing.TB, version string) []Attestation {
	t.Helper()
	atts, err := Parse(answer(t, version))
	if err != nil {
		t.Fatal(err)
	}
	return atts
}

func embedded(t testing.TB) *root.TrustedRoot {
	t.Helper()
	tr, err := root.NewTrustedRootFromJSON(embeddedRoot)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestVerifyRealProvenance: the real provenance of sigstore 1.3.0 (SLSA
// v0.2) and 2.0.0 (SLSA v1) verifies against the embedded public-good
// root and the real registry's tarball integrity, and says where the
// tarball was built.
func TestVerifyRealProvenance(t *testing.T) {
	tr := embedded(t)
	for _, c := range []struct {
		version, integrity string
		want               Provenance
	}{
		{"1.3.0", integrity130, Provenance{Repository: "https://github.com/sigstore/sigstore-js", Workflow: ".github/workflows/release.yml@refs/heads/main", Commit: "dae8bd8eb433a4147b4655c00fe73e0f22bc0fb1"}},
		{"2.0.0", integrity200, Provenance{Repository: "https://github.com/sigstore/sigstore-js", Workflow: ".github/workflows/release.yml@refs/heads/main", Commit: "f0b49a04e5a62250e0f60fb128004a73110fe311"}},
	} {
		start := time.Now()
		p, err := Verify(parsed(t, c.version), "sigstore", c.version, c.integrity, tr)
		if err != nil {
			t.Fatalf("%s: %v", c.version, err)
		}
		t.Logf("sigstore@%s verified in %v: %+v", c.version, time.Since(start), *p)
		if *p != c.want {
			t.Errorf("sigstore@%s: %+v, want %+v", c.version, *p, c.want)
		}
	}
}

// rewrite decodes the provenance bundle of atts[0], lets edit change it
// and puts it back.
func rewrite(t *testing.T, atts []Attestation, edit func(b map[string]any)) []Attestation {
	t.Helper()
	var b map[string]any
	if err := json.Unmarshal(atts[0].Bundle, &b); err != nil {
		t.Fatal(err)
	}
	edit(b)
	data, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	out := append([]Attestation(nil), atts...)
	out[0].Bundle = data
	return out
}

// rootWithCAsOf is the trusted root base with the Fulcio CAs of other:
// base's logs, another deployment's CA.
func rootWithCAsOf(t *testing.T, base, other []byte) root.TrustedMaterial {
	t.Helper()
	var b, o map[string]json.RawMessage
	if err := json.Unmarshal(base, &b); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(other, &o); err != nil {
		t.Fatal(err)
	}
	b["certificateAuthorities"] = o["certificateAuthorities"]
	data, _ := json.Marshal(b)
	tr, err := root.NewTrustedRootFromJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func envelope(b map[string]any) map[string]any { return b["dsseEnvelope"].(map[string]any) }

// TestVerifyRefuses: each way the provenance can fail to bind the tarball
// is an error that names it.
func TestVerifyRefuses(t *testing.T) {
	tr := embedded(t)
	scaffolding, err := root.NewTrustedRootFromJSON(readData(t, "scaffolding-trusted-root.json"))
	if err != nil {
		t.Fatal(err)
	}
	noCA := rootWithCAsOf(t, embeddedRoot, readData(t, "scaffolding-trusted-root.json"))
	atts := parsed(t, "1.3.0")
	flipSig := rewrite(t, atts, func(b map[string]any) {
		sig := envelope(b)["signatures"].([]any)[0].(map[string]any)
		raw, _ := base64.StdEncoding.DecodeString(sig["sig"].(string))
		raw[len(raw)/2] ^= 1
		sig["sig"] = base64.StdEncoding.EncodeToString(raw)
	})
	editSubject := rewrite(t, atts, func(b map[string]any) {
		env := envelope(b)
		payload, _ := base64.StdEncoding.DecodeString(env["payload"].(string))
		edited := strings.Replace(string(payload), "pkg:npm/sigstore@1.3.0", "pkg:npm/sigstore@1.3.1", 1)
		if edited == string(payload) {
			t.Fatal("the statement does not name pkg:npm/sigstore@1.3.0")
		}
		env["payload"] = base64.StdEncoding.EncodeToString([]byte(edited))
	})
	otherTarball := strings.Replace(integrity130, "dhdv", "dhdw", 1)
	for _, c := range []struct {
		name, pkg, version, integrity string
		atts                          []Attestation
		tr                            root.TrustedMaterial
		want                          string
	}{
		{"another package", "sigstore-evil", "1.3.0", integrity130, atts, tr, "not pkg:npm/sigstore-evil@1.3.0"},
		{"another version", "sigstore", "1.3.1", integrity130, atts, tr, "not pkg:npm/sigstore@1.3.1"},
		{"another version's tarball", "sigstore", "1.3.0", integrity200, atts, tr, "artifact digest does not match"},
		{"a tampered integrity", "sigstore", "1.3.0", otherTarball, atts, tr, "artifact digest does not match"},
		{"a bad integrity", "sigstore", "1.3.0", "sha256-abc", atts, tr, "is not an SRI sha512 digest"},
		{"a flipped signature byte", "sigstore", "1.3.0", integrity130, flipSig, tr, "signature does not match"},
		{"an edited subject", "sigstore", "1.3.0", integrity130, editSubject, tr, "does not match envelope payload hash"},
		{"another deployment's root", "sigstore", "1.3.0", integrity130, atts, scaffolding, "not enough verified log entries"},
		{"a root without the Fulcio CA", "sigstore", "1.3.0", integrity130, atts, noCA, "certificate"},
		{"a mislabelled predicate type", "sigstore", "1.3.0", integrity130, []Attestation{{SLSAv1, atts[0].Bundle}}, tr, "is not the https://slsa.dev/provenance/v1 the registry lists it as"},
		{"two provenances", "sigstore", "1.3.0", integrity130, []Attestation{atts[0], atts[0]}, tr, "2 provenance attestations"},
		{"a bundle that is not one", "sigstore", "1.3.0", integrity130, []Attestation{{SLSAv02, json.RawMessage(`{"mediaType":"x"}`)}}, tr, "not a Sigstore bundle"},
	} {
		p, err := Verify(c.atts, c.pkg, c.version, c.integrity, c.tr)
		if err == nil {
			t.Errorf("%s: verified: %+v", c.name, p)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "does not verify") || !strings.Contains(err.Error(), "do not lock this version") {
			t.Errorf("%s: %v, want it to say %q and what to do", c.name, err, c.want)
		}
		t.Logf("%s: %v", c.name, err)
	}
}

// TestVerifyWithoutProvenance: no attestations, or only the registry's
// publish attestation, is no provenance and no error.
func TestVerifyWithoutProvenance(t *testing.T) {
	for _, atts := range [][]Attestation{nil, parsed(t, "1.3.0")[1:]} {
		p, err := Verify(atts, "sigstore", "1.3.0", integrity130, embedded(t))
		if p != nil || err != nil {
			t.Errorf("%d attestation(s): %+v, %v; want none", len(atts), p, err)
		}
	}
}

func TestPurlAndURL(t *testing.T) {
	if got := Purl("@scope/pkg", "1.0.0"); got != "pkg:npm/%40scope/pkg@1.0.0" {
		t.Errorf("Purl: %s", got)
	}
	if got := URL("https://r.example/", "@scope/pkg", "1.0.0"); got != "https://r.example/-/npm/v1/attestations/@scope%2fpkg@1.0.0" {
		t.Errorf("URL: %s", got)
	}
}

// TestFetch: against a server playing the registry's attestations
// endpoint, with the real bundles: a 200 is the parsed list, a 404 no
// attestations, anything else (another status, an answer over MaxBody,
// garbage) an error.
func TestFetch(t *testing.T) {
	big := make([]byte, MaxBody+1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.EscapedPath() {
		case "/-/npm/v1/attestations/sigstore@1.3.0":
			w.Write(answer(t, "1.3.0"))
		case "/-/npm/v1/attestations/@scope%2fpkg@1.0.0":
			w.Write(answer(t, "2.0.0"))
		case "/-/npm/v1/attestations/big@1.0.0":
			w.Write(big)
		case "/-/npm/v1/attestations/garbage@1.0.0":
			w.Write([]byte(`{"attestations":[{"predicateType":"x","bundle":{}}],"extra":1}`))
		case "/-/npm/v1/attestations/broken@1.0.0":
			http.Error(w, "boom", http.StatusInternalServerError)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	reg := srv.URL + "/"
	ctx := context.Background()
	atts, err := Fetch(ctx, srv.Client(), reg, "sigstore", "1.3.0")
	if err != nil || len(atts) != 2 || atts[0].PredicateType != SLSAv02 || atts[1].PredicateType != Publish {
		t.Fatalf("sigstore@1.3.0: %v, %v", atts, err)
	}
	if p, err := Verify(atts, "sigstore", "1.3.0", integrity130, embedded(t)); err != nil || p.Repository != "https://github.com/sigstore/sigstore-js" {
		t.Errorf("the fetched attestations: %+v, %v", p, err)
	}
	if atts, err := Fetch(ctx, srv.Client(), reg, "@scope/pkg", "1.0.0"); err != nil || len(atts) != 1 {
		t.Errorf("a scoped name: %v, %v", atts, err)
	}
	if atts, err := Fetch(ctx, srv.Client(), reg, "none", "1.0.0"); err != nil || atts != nil {
		t.Errorf("a 404: %v, %v; want no attestations", atts, err)
	}
	for _, c := range []struct{ name, want string }{
		{"big", "larger than 8 MiB"}, {"garbage", `exactly the key "attestations"`}, {"broken", "500"},
	} {
		if atts, err := Fetch(ctx, srv.Client(), reg, c.name, "1.0.0"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, %v; want an error saying %q", c.name, atts, err, c.want)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, in := range []string{
		``, `[]`, `{}`, `{"attestations":[]}`, `{"attestations":{}}`,
		`{"attestations":[{"predicateType":"x"}]}`,
		`{"attestations":[{"predicateType":"","bundle":{}}]}`,
		`{"attestations":[{"predicateType":1,"bundle":{}}]}`,
		`{"attestations":[{"predicateType":"x","bundle":[]}]}`,
		`{"attestations":[{"predicateType":"x","bundle":{},"more":1}]}`,
		`{"attestations":[{"predicateType":"x","predicateType":"y","bundle":{}}]}`,
		`{"attestations":[null]}`,
	} {
		if atts, err := Parse([]byte(in)); err == nil {
			t.Errorf("Parse(%s) = %v, want an error", in, atts)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(answer(f, "1.3.0"))
	f.Add([]byte(`{"attestations":[{"predicateType":"x","bundle":{}}]}`))
	f.Add([]byte(`{"attestations":[null]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		atts, err := Parse(data)
		if err != nil {
			return
		}
		if len(atts) == 0 || len(atts) > MaxAttestations {
			t.Fatalf("%d attestations", len(atts))
		}
		for _, a := range atts {
			if a.PredicateType == "" || len(a.Bundle) == 0 {
				t.Fatalf("%+v", a)
			}
			// Verify never panics on what Parse accepts.
			Verify([]Attestation{{SLSAv1, a.Bundle}}, "p", "1.0.0", integrity130, embeddedForFuzz)
		}
	})
}

var embeddedForFuzz, _ = root.NewTrustedRootFromJSON(embeddedRoot)

// TestTrustedRoot: the embedded root by default, the configuration
// directory's file over it, MCPFORM_TRUSTED_ROOT over both, and a file
// that does not parse an error, never the embedded root.
func TestTrustedRoot(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	t.Setenv("HOME", cfg)
	t.Setenv(EnvRoot, "")
	if _, src, err := TrustedRoot(); err != nil || src != "embedded" {
		t.Fatalf("%s, %v; want the embedded root", src, err)
	}
	conf := filepath.Join(cfg, filepath.FromSlash(ConfigFile))
	os.MkdirAll(filepath.Dir(conf), 0o755)
	os.WriteFile(conf, readData(t, "scaffolding-trusted-root.json"), 0o644)
	tr, src, err := TrustedRoot()
	if err != nil || src != conf {
		t.Fatalf("%s, %v; want %s", src, err, conf)
	}
	if _, err := Verify(parsed(t, "1.3.0"), "sigstore", "1.3.0", integrity130, tr); err == nil {
		t.Error("the configured scaffolding root verified public-good's bundle: it was not the one used")
	}
	env := filepath.Join(t.TempDir(), "root.json")
	os.WriteFile(env, embeddedRoot, 0o644)
	t.Setenv(EnvRoot, env)
	if _, src, err := TrustedRoot(); err != nil || src != env {
		t.Fatalf("%s, %v; want %s", src, err, env)
	}
	os.WriteFile(env, []byte(`{"mediaType":"nonsense"}`), 0o644)
	if _, src, err := TrustedRoot(); err == nil || !strings.Contains(err.Error(), EnvRoot) {
		t.Errorf("a broken %s: %s, %v; want an error", EnvRoot, src, err)
	}
	t.Setenv(EnvRoot, "")
	os.WriteFile(conf, []byte(`not json`), 0o644)
	if _, src, err := TrustedRoot(); err == nil || !strings.Contains(err.Error(), "remove it") {
		t.Errorf("a broken %s: %s, %v; want an error", conf, src, err)
	}
}

// BenchmarkVerify: the real sigstore@2.0.0 provenance, parsed and
// verified against the embedded root, as plan does once per resolved npm
// package.
func BenchmarkVerify(b *testing.B) {
	data := answer(b, "2.0.0")
	tr := embedded(b)
	for b.Loop() {
		atts, err := Parse(data)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Verify(atts, "sigstore", "2.0.0", integrity200, tr); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTrustedRoot: loading the embedded root, as plan does once per
// resolved npm package with provenance.
func BenchmarkTrustedRoot(b *testing.B) {
	b.Setenv(EnvRoot, "")
	b.Setenv("XDG_CONFIG_HOME", b.TempDir())
	for b.Loop() {
		if _, _, err := TrustedRoot(); err != nil {
			b.Fatal(err)
		}
	}
}
