package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpform/mcpform/internal/npmtest"
)

// The official conformance suite's OAuth client scenarios, against its
// own authorization and resource servers: internal/cmd/oauthconformance
// declares each scenario's server with auth { oauth = true } and runs
// this mcpform's login, apply and run against it, calling a tool through
// the proxy. Every scenario of the auth suite passes, and so do the
// 2025-03-26 endpoint fallback, the resource mismatch (which must be
// refused) and the offline_access ones. The one left out is
// auth/2025-03-26-oauth-metadata-backcompat: its authorization server's
// metadata names an issuer other than the URL it is fetched from, which
// mcpform refuses (RFC 8414, section 3.3), as the test below shows.
func TestOAuthConformance(t *testing.T) {
	conformance := npmtest.Bin(t, "conformance")
	dir := t.TempDir()
	adapter := filepath.Join(dir, "oauthconformance")
	if out, err := exec.Command("go", "build", "-o", adapter, "../../internal/cmd/oauthconformance").CombinedOutput(); err != nil {
		t.Fatalf("building the adapter: %v\n%s", err, out)
	}
	bin, err := exec.LookPath("mcpform") // this test binary, as TestMain installs it
	if err != nil {
		t.Fatal(err)
	}
	scenarios := func(t *testing.T, args ...string) map[string]string {
		out := filepath.Join(t.TempDir(), "results")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, conformance, append([]string{"client", "--command", adapter, "-o", out}, args...)...)
		cmd.Env = append(os.Environ(), "PATH="+npmtest.BinDir()+string(os.PathListSeparator)+os.Getenv("PATH"), "MCPFORM="+bin)
		log, _ := cmd.CombinedOutput() // non-zero when a scenario fails: the checks say which
		return scenarioResults(t, out, log)
	}

	t.Run("suite", func(t *testing.T) {
		t.Parallel()
		got := scenarios(t, "--suite", "auth")
		for _, want := range []string{"auth/metadata-default", "auth/metadata-var1", "auth/basic-cimd", "auth/pre-registration",
			"auth/scope-step-up", "auth/scope-retry-limit", "auth/token-endpoint-auth-basic", "auth/token-endpoint-auth-post", "auth/token-endpoint-auth-none"} {
			if _, ok := got[want]; !ok {
				t.Errorf("the auth suite ran no %s", want)
			}
		}
		for name, failure := range got {
			if failure != "" {
				t.Errorf("%s: %s", name, failure)
			}
		}
	})
	for _, name := range []string{"auth/2025-03-26-oauth-endpoint-fallback", "auth/resource-mismatch", "auth/offline-access-scope", "auth/offline-access-not-supported"} {
		t.Run(strings.TrimPrefix(name, "auth/"), func(t *testing.T) {
			t.Parallel()
			got := scenarios(t, "--scenario", name)
			if failure, ok := got[name]; !ok || failure != "" {
				t.Errorf("%s: ran %v, failure %q", name, ok, failure)
			}
		})
	}
	t.Run("issuer-mismatch-refused", func(t *testing.T) {
		t.Parallel()
		got := scenarios(t, "--scenario", "auth/2025-03-26-oauth-metadata-backcompat")
		if failure := got["auth/2025-03-26-oauth-metadata-backcompat"]; !strings.Contains(failure, "does not match issuer") {
			t.Errorf("mcpform login did not refuse the metadata that names another issuer: %q", failure)
		}
	})
}

// scenarioResults reads the suite's results under out: each scenario's
// first failed check ("" when none failed).
func scenarioResults(t *testing.T, out string, log []byte) map[string]string {
	t.Helper()
	results := map[string]string{}
	paths, _ := filepath.Glob(filepath.Join(out, "*", "*", "checks.json"))
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var checks []struct{ ID, Status, ErrorMessage string }
		if err := json.Unmarshal(data, &checks); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		dir := filepath.Dir(path)
		name := filepath.Base(filepath.Dir(dir)) + "/" + resultTime.ReplaceAllString(filepath.Base(dir), "")
		results[name] = ""
		for _, c := range checks {
			if c.Status == "FAILURE" && results[name] == "" {
				results[name] = c.ID + ": " + c.ErrorMessage
				if stderr, err := os.ReadFile(filepath.Join(dir, "stderr.txt")); err == nil {
					results[name] += "\n" + string(stderr)
				}
			}
		}
	}
	if len(results) == 0 {
		t.Fatalf("the conformance suite ran no scenario:\n%s", log)
	}
	return results
}

// resultTime is the timestamp a result directory's name ends with.
var resultTime = regexp.MustCompile(`-\d{4}-\d\d-\d\dT[\d-]+Z$`)
