package plan

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpform/mcpform/internal/npmtest"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/pins/npm"
	"github.com/mcpform/mcpform/pins/provenance"
)

// provenanceBundle is one of pins/provenance's real test bundles.
func provenanceBundle(t *testing.T, name string) json.RawMessage {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "pins", "provenance", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestPlanNPMProvenance: planNPM resolves sigstore@1.3.0's tree on the real
// registry and reads its attestations from a server playing the registry's
// attestations endpoint (the registry reachable here strips them) with
// the real bundles: the real provenance is recorded; another version's
// provenance under 1.3.0 is the server's plan error, nothing locked; a 404
// is a record without provenance.
func TestPlanNPMProvenance(t *testing.T) {
	if _, err := exec.LookPath("npm"); err != nil {
		why := "npm is not on PATH: this test runs the real npm against the registry; install Node.js and npm"
		if err := npmtest.InCI(why); err != nil {
			t.Fatal(err)
		}
		t.Skip(why)
	}
	serve := map[string][]provenance.Attestation{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		atts, ok := serve[r.URL.EscapedPath()]
		if !ok {
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"attestations": atts})
	}))
	defer srv.Close()
	attestationRegistry = srv.URL + "/"
	defer func() { attestationRegistry = "" }()
	const path = "/-/npm/v1/attestations/sigstore@1.3.0"
	spec := &npm.Spec{Runner: "npx", Package: "sigstore", Version: "1.3.0", Requested: "1.3.0"}

	serve[path] = []provenance.Attestation{
		{PredicateType: provenance.SLSAv02, Bundle: provenanceBundle(t, "sigstore@1.3.0-provenance.sigstore.json")},
		{PredicateType: provenance.Publish, Bundle: provenanceBundle(t, "sigstore@1.3.0-publish.sigstore.json")},
	}
	r := planNPM(t.Context(), spec, "s", nil, t.TempDir())
	if r.err != nil {
		t.Fatal(r.err)
	}
	if p := r.rec.Provenance; p == nil || p.Repository != "https://github.com/sigstore/sigstore-js" || p.Workflow != ".github/workflows/release.yml@refs/heads/main" {
		t.Fatalf("the recorded provenance: %+v", p)
	}

	serve[path] = []provenance.Attestation{{PredicateType: provenance.SLSAv1, Bundle: provenanceBundle(t, "sigstore@2.0.0-provenance.sigstore.json")}}
	r = planNPM(t.Context(), spec, "s", nil, t.TempDir())
	if r.err == nil || r.rec != nil || !strings.Contains(r.err.Error(), "does not verify") || !strings.Contains(r.err.Error(), "do not lock this version") {
		t.Fatalf("sigstore@2.0.0's provenance served for 1.3.0: %+v, %v; want the server's plan error", r.rec, r.err)
	}

	delete(serve, path)
	r = planNPM(t.Context(), spec, "s", nil, t.TempDir())
	if r.err != nil || r.rec.Provenance != nil {
		t.Fatalf("no attestations: %+v, %v; want a record without provenance", r.rec, r.err)
	}
}

// TestNewServerSaysProvenance: a new npm server's CFG-SERVER-ADDED says
// where its tarball was built, or that the registry publishes no
// provenance for it.
func TestNewServerSaysProvenance(t *testing.T) {
	tree := treeOf("top@1.0.0")
	for _, c := range []struct {
		rec  *lock.NPM
		want string
	}{
		{withProvenance(npmRecord("1.0.0", sriA, tree), repoA, wfA), "its provenance verifies: built from https://github.com/acme/top by .github/workflows/release.yml@refs/tags/v1.1.0"},
		{npmRecord("1.0.0", sriA, tree), "the registry publishes no provenance for it"},
	} {
		sp := &ServerPlan{Name: "s", Addr: "server.s", Changes: []Change{{Addr: "server.s", Rule: "CFG-SERVER-ADDED", Detail: "new server"}}}
		sp.Entry = &lock.Entry{Mcpform: &lock.Settings{}}
		recordNPM(&Plan{}, sp, npmResult{rec: c.rec, packages: 1}, nil)
		if d := sp.Changes[0].Detail; !strings.Contains(d, c.want) {
			t.Errorf("CFG-SERVER-ADDED detail %q lacks %q", d, c.want)
		}
		if sp.Entry.Mcpform.NPM.Provenance != c.rec.Provenance {
			t.Errorf("the entry's provenance is %+v, not the record's", sp.Entry.Mcpform.NPM.Provenance)
		}
	}
}
