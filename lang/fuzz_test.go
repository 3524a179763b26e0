package lang

import (
	"bytes"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/mcpform/mcpform/policy"
)

// FuzzLoad evaluates arbitrary bytes as mcp.hcl, with a second arbitrary
// file as the module in ./m, entirely in memory. Whatever the input, Load
// must not panic, must render its diagnostics, and a configuration it
// accepts must hold only values that the rest of mcpform can trust.
// Seeds: testdata/fuzz/FuzzLoad (from the error files and examples).
func FuzzLoad(f *testing.F) {
	for _, glob := range []string{"testdata/error-files/*.hcl", "../examples/*/mcp.hcl"} {
		names, _ := filepath.Glob(glob)
		for _, n := range names {
			if b, err := os.ReadFile(n); err == nil {
				f.Add(b, []byte(`server "s" { command = ["x"] }`))
			}
		}
	}
	f.Fuzz(func(t *testing.T, root, mod []byte) {
		fsys := fstest.MapFS{
			"mcp.hcl":   {Data: root},
			"m/mcp.hcl": {Data: mod},
		}
		cfg, diags := load(fsys, ".", Options{Version: "0.1.0", Vars: nil})
		var buf bytes.Buffer
		if err := WriteDiagnostics(&buf, diags, cfg.Files, true, 80); err != nil {
			t.Fatalf("WriteDiagnostics: %v", err)
		}
		if err := WriteDiagnosticsJSON(&buf, diags, cfg.Files); err != nil {
			t.Fatalf("WriteDiagnosticsJSON: %v", err)
		}
		for _, d := range diags {
			if d.Summary == "" {
				t.Errorf("diagnostic without a summary: %+v", d)
			}
		}
		if diags.HasErrors() {
			return
		}
		checkServers(t, cfg.Servers)
	})
}

// checkServers asserts what plan and the lock rely on.
func checkServers(t *testing.T, servers []*Server) {
	t.Helper()
	seen := map[string]bool{}
	for i, s := range servers {
		if s.Name == "" || seen[s.Name] || (i > 0 && servers[i-1].Name >= s.Name) {
			t.Errorf("server names not unique and sorted at %q", s.Name)
		}
		seen[s.Name] = true
		switch {
		case (len(s.Command) == 0) == (s.URL == ""):
			t.Errorf("%s: command %q and url %q: want exactly one", s.Name, s.Command, s.URL)
		case s.URL != "":
			checkRemote(t, s)
		case s.Command[0] == "":
			t.Errorf("%s: empty command", s.Name)
		case s.Headers != nil || s.Auth != nil:
			t.Errorf("%s: a command server with headers or auth", s.Name)
		}
		if !contains(protocols, s.Protocol) || s.Timeout <= 0 || s.Timeout > maxTimeout {
			t.Errorf("%s: protocol %q timeout %v", s.Name, s.Protocol, s.Timeout)
		}
		for _, e := range s.Env {
			if !envName.MatchString(e) {
				t.Errorf("%s: env name %q", s.Name, e)
			}
		}
		if s.ClientCapabilities != nil && !json.Valid(s.ClientCapabilities) {
			t.Errorf("%s: client capabilities are not JSON", s.Name)
		}
		if sb := s.Policy.Sandbox; sb != nil {
			for _, p := range append(append([]string{}, sb.Filesystem.Read...), sb.Filesystem.Write...) {
				if err := policy.CheckPath(p); err != nil {
					t.Errorf("%s: %v", s.Name, err)
				}
			}
			for _, a := range sb.Network.Allow {
				if hp, err := policy.ParseHostPort(a); err != nil || hp.String() != a {
					t.Errorf("%s: allow %q not canonical (%v)", s.Name, a, err)
				}
			}
		}
	}
}

// checkRemote asserts what a remote server's connection relies on: a url
// in its normal form, headers that are neither reserved nor credentials,
// and one authorization method.
func checkRemote(t *testing.T, s *Server) {
	t.Helper()
	u, err := url.Parse(s.URL)
	if err != nil || u.User != nil || u.Fragment != "" || u.Hostname() == "" || u.Path == "" ||
		!(u.Scheme == "https" || u.Scheme == "http" && isLoopback(u.Hostname())) {
		t.Errorf("%s: url %q (%v)", s.Name, s.URL, err)
	} else if again := checkURL(&hcl.Attribute{Name: "url", Expr: hcl.StaticExpr(cty.StringVal(s.URL), hcl.Range{})}, s.URL, new(hcl.Diagnostics)); again != s.URL {
		t.Errorf("%s: url %q normalises again to %q", s.Name, s.URL, again)
	}
	if len(s.Env) > 0 || s.Policy.Sandbox != nil {
		t.Errorf("%s: a remote server with env or a sandbox", s.Name)
	}
	if s.Headers != nil && len(s.Headers) == 0 {
		t.Errorf("%s: empty headers are not nil", s.Name)
	}
	for k, v := range s.Headers {
		if !isToken(k) || containsFold(reservedHeaders, k) || containsFold(credentialHeaders, k) || looksLikeCredential(v) ||
			strings.ContainsAny(v, "\r\n\x00") {
			t.Errorf("%s: header %q", s.Name, k)
		}
	}
	if a := s.Auth; a != nil {
		if a.OAuth == (a.BearerEnv != "") || (a.BearerEnv != "" && !envName.MatchString(a.BearerEnv)) || (len(a.Scopes) > 0 && !a.OAuth) {
			t.Errorf("%s: auth %+v", s.Name, a)
		}
		for _, sc := range a.Scopes {
			if !isScopeToken(sc) {
				t.Errorf("%s: scope %q", s.Name, sc)
			}
		}
	}
}

// FuzzFormat checks that Format never breaks a file: what it returns parses
// and formats to itself.
func FuzzFormat(f *testing.F) {
	names, _ := filepath.Glob("testdata/fmt/*.in.hcl")
	for _, n := range names {
		if b, err := os.ReadFile(n); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		out, diags := Format(src, "f.hcl")
		if diags.HasErrors() {
			if !bytes.Equal(out, src) {
				t.Fatal("Format changed a file it could not parse")
			}
			return
		}
		again, diags := Format(out, "f.hcl")
		if diags.HasErrors() {
			t.Fatalf("formatted output does not parse: %v", diags)
		}
		if !bytes.Equal(again, out) {
			t.Skip("hclwrite is not idempotent on this input") // reported, not ours to fix
		}
	})
}

// FuzzNesting checks scanNesting, a parser of untrusted bytes, against
// hclsyntax's own lexer: counted over the lexer's tokens by the same
// rules, no input nests deeper, or earlier, than the scanner says. An
// input the scanner accepts at MaxNesting parses and formats.
// Seeds: testdata/fuzz/FuzzNesting, the fmt inputs and the error files.
func FuzzNesting(f *testing.F) {
	for _, glob := range []string{"testdata/fmt/*.in.hcl", "testdata/error-files/*.hcl"} {
		names, _ := filepath.Glob(glob)
		for _, n := range names {
			if b, err := os.ReadFile(n); err == nil {
				f.Add(b, false)
			}
		}
	}
	f.Fuzz(func(t *testing.T, src []byte, expr bool) {
		s, lex := syntaxConfig, hclsyntax.LexConfig
		if expr {
			s, lex = syntaxExpression, hclsyntax.LexExpression
		}
		toks, _ := lex(src, "f.hcl", hcl.InitialPos)
		depth, at := tokenNesting(toks, s, -1)
		if depth > 0 {
			got, ok := scanNesting(src, s, depth-1)
			if ok || got > at {
				t.Fatalf("tokens nest %d deep at byte %d; the scanner passes %d at %d (%v)", depth, at, depth-1, got, ok)
			}
		}
		if len(src) <= MaxFileBytes && depth <= MaxNesting && !expr {
			Format(src, "f.hcl")
		}
	})
}
