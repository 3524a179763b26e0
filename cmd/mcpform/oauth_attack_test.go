package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpform/mcpform/oauth"
)

// oauthRemote is a real Go SDK server (Streamable HTTP, stateless) as an
// OAuth protected resource: it takes only the bearer token it is given,
// answers anything else with a 401 naming its protected resource
// metadata, and serves that metadata, listing the issuers setIssuers
// last set. A POST whose body holds "echo-my-headers" is answered with a
// 500 error page that echoes the request's Authorization header, as a
// careless server's debug page does.
func oauthRemote(t *testing.T, token string) (url string, setIssuers func(...string)) {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "oauth-remote", Version: "1.0.0"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echo the text"}, func(ctx context.Context, req *sdk.CallToolRequest, args in) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: args.Text}}}, nil, nil
	})
	handler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{Stateless: true})
	var mu sync.Mutex
	var issuers []string
	var origin string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/oauth-protected-resource/mcp" {
			mu.Lock()
			doc, _ := json.Marshal(map[string]any{"resource": origin + "/mcp", "authorization_servers": issuers})
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.Write(doc)
			return
		}
		if r.URL.Path != "/mcp" {
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+token {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+origin+`/.well-known/oauth-protected-resource/mcp"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost {
			var body bytes.Buffer
			body.ReadFrom(r.Body)
			if strings.Contains(body.String(), "echo-my-headers") {
				http.Error(w, "internal error; request headers: Authorization: "+r.Header.Get("Authorization"), http.StatusInternalServerError)
				return
			}
			r.Body = readCloser{&body}
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	origin = ts.URL
	setIssuers = func(is ...string) {
		mu.Lock()
		defer mu.Unlock()
		issuers = is
	}
	return ts.URL + "/mcp", setIssuers
}

type readCloser struct{ *bytes.Buffer }

func (readCloser) Close() error { return nil }

// oauthProject writes an mcp.hcl that declares the server at url with
// auth { oauth = true }, points XDG_STATE_HOME at a directory of its own,
// and, when token is not "", saves a login of it there from issuer (as
// mcpform login would, so no browser is needed).
func oauthProject(t *testing.T, url, issuer, token string) (dir, state string) {
	t.Helper()
	dir, state = t.TempDir(), t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	hcl := "server \"remote\" {\n  url = \"" + url + "\"\n  auth {\n    oauth = true\n  }\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "mcp.hcl"), []byte(hcl), 0o644); err != nil {
		t.Fatal(err)
	}
	if token != "" {
		saveLogin(t, state, url, issuer, token)
	}
	return dir, state
}

func saveLogin(t *testing.T, state, url, issuer, token string) {
	t.Helper()
	store := oauth.Store{Dir: filepath.Join(state, "mcpform", "oauth")}
	err := store.Save(&oauth.Record{URL: url, Resource: url, Issuer: issuer, ClientID: "mcpform-test", TokenURL: issuer + "/token",
		Token: oauth.Token{AccessToken: token, RefreshToken: "refresh-" + token, Expiry: time.Now().Add(time.Hour)}})
	if err != nil {
		t.Fatal(err)
	}
}

// The OAuth access token is a credential: it is in none of what mcpform
// writes or prints (mcp.lock, a saved plan, plan -json, run's audit log
// and output), and a server's error page that echoes it has it redacted.
func TestAttackOAuthTokenNeverWritten(t *testing.T) {
	const token = "oauth-access-t0ken-SECRET"
	const issuer = "https://as.example.com"
	url, setIssuers := oauthRemote(t, token)
	setIssuers(issuer)
	dir, _ := oauthProject(t, url, issuer, token)

	planJSON := mcpformIn(t, dir, 0, "plan", "-json")
	mcpformIn(t, dir, 0, "plan", "-out", "saved.plan")
	mcpformIn(t, dir, 0, "apply", "-auto-approve")
	lockData, err := os.ReadFile(filepath.Join(dir, "mcp.lock"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(lockData, []byte(issuer)) {
		t.Errorf("the lock does not pin the issuer:\n%s", lockData)
	}
	saved, err := os.ReadFile(filepath.Join(dir, "saved.plan"))
	if err != nil {
		t.Fatal(err)
	}
	ok := runSession(t, dir, "2025-11-25", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"over oauth"}`)
	if !strings.Contains(ok, `"text":"over oauth"`) {
		t.Errorf("the call through mcpform run did not reach the server with the stored token:\n%s", ok)
	}
	leaked := runSession(t, dir, "2025-11-25", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"echo-my-headers"}`)
	if !strings.Contains(leaked, `"id":2,"error"`) || !strings.Contains(leaked, "500") {
		t.Errorf("the server's 500 did not reach the client as an error:\n%s", leaked)
	}
	if !strings.Contains(leaked, "[the OAuth token]") {
		t.Errorf("the echoed token is not shown as redacted:\n%s", leaked)
	}
	auditLog, err := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for what, b := range map[string][]byte{"mcp.lock": lockData, "the saved plan": saved, "plan -json": planJSON,
		"run's output": []byte(ok + leaked), "the audit log": auditLog} {
		if bytes.Contains(b, []byte(token)) {
			t.Errorf("the OAuth token is in %s:\n%s", what, b)
		}
	}
}

// A server that signs in with OAuth and has no login here: plan and
// apply fail saying to run mcpform login NAME and leave mcp.lock
// byte-identical; verify exits 3 (it could not probe) with the same.
func TestAttackOAuthNoLogin(t *testing.T) {
	const token = "oauth-access-t0ken"
	const issuer = "https://as.example.com"
	url, setIssuers := oauthRemote(t, token)
	setIssuers(issuer)
	dir, state := oauthProject(t, url, issuer, token)
	mcpformIn(t, dir, 0, "apply", "-auto-approve")
	lockPath := filepath.Join(dir, "mcp.lock")
	before, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(state, "mcpform", "oauth")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"plan"}, {"apply", "-auto-approve"}, {"verify"}} {
		code := exitError
		if args[0] == "verify" {
			code = verifyProbeFailure
		}
		out, errOut := mcpformOut(t, dir, code, args...)
		if all := out + errOut; !strings.Contains(all, "mcpform login remote") {
			t.Errorf("mcpform %s does not say to run `mcpform login remote`:\n%s", strings.Join(args, " "), all)
		}
		if after, _ := os.ReadFile(lockPath); !bytes.Equal(after, before) {
			t.Errorf("mcpform %s without a login changed mcp.lock", strings.Join(args, " "))
		}
	}
}

// A server that names another authorization server since it was locked
// is a change to review: plan shows MCP-AUTHORIZATION-CHANGED and
// verify reports drift, even while the login's issuer is still among
// those it names.
func TestAttackOAuthIssuerAdded(t *testing.T) {
	const token = "oauth-access-t0ken"
	const issuerA, issuerB = "https://as-a.example.com", "https://as-b.example.com"
	url, setIssuers := oauthRemote(t, token)
	setIssuers(issuerA)
	dir, _ := oauthProject(t, url, issuerA, token)
	mcpformIn(t, dir, 0, "apply", "-auto-approve")
	mcpformIn(t, dir, verifyInSync, "verify")

	setIssuers(issuerA, issuerB)
	if out := mcpformIn(t, dir, 0, "plan"); !strings.Contains(string(out), "MCP-AUTHORIZATION-CHANGED") || !strings.Contains(string(out), issuerB) {
		t.Errorf("the plan does not show the new authorization server:\n%s", out)
	}
	if out := mcpformIn(t, dir, verifyDrift, "verify"); !strings.Contains(string(out), "authorization") {
		t.Errorf("verify does not name the authorization as drifted:\n%s", out)
	}
}

// mcpformOut is mcpformIn that returns stderr too.
func mcpformOut(t *testing.T, dir string, code int, args ...string) (string, string) {
	t.Helper()
	cmd := exec.Command("mcpform", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	got := 0
	if ee, ok := err.(*exec.ExitError); ok {
		got = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("mcpform %s: %v", strings.Join(args, " "), err)
	}
	if got != code {
		t.Fatalf("mcpform %s: exit %d, want %d\n%s%s", strings.Join(args, " "), got, code, out, stderr.String())
	}
	return string(out), stderr.String()
}
