package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/mcpform/mcpform/mcp"
)

// tokenEndpoint is a fake authorization server's token endpoint: it is
// what a real one cannot be made to show on demand (a refresh refused, a
// refresh token rotated). answer is the JSON of each refresh's answer,
// with its status; the form of each request is kept.
type tokenEndpoint struct {
	URL string

	mu     sync.Mutex
	status int
	answer string
	forms  []url.Values
}

func newTokenEndpoint(t *testing.T, status int, answer string) *tokenEndpoint {
	t.Helper()
	te := &tokenEndpoint{status: status, answer: answer}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		te.mu.Lock()
		te.forms = append(te.forms, r.PostForm)
		status, answer := te.status, te.answer
		te.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, answer)
	}))
	t.Cleanup(ts.Close)
	te.URL = ts.URL + "/token"
	return te
}

func (te *tokenEndpoint) requests() []url.Values {
	te.mu.Lock()
	defer te.mu.Unlock()
	return slices.Clone(te.forms)
}

// storedWith saves rec in a fresh store and returns the handler of it.
func storedWith(t *testing.T, rec *Record) (*Stored, Store) {
	t.Helper()
	s := Store{Dir: t.TempDir()}
	if err := s.Save(rec); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(rec.TokenURL)
	h, err := NewStored("remote", rec.URL, s, mcp.HTTPClient(u))
	if err != nil {
		t.Fatal(err)
	}
	return h, s
}

func expiredRecord(serverURL, tokenURL string) *Record {
	r := testRecord(serverURL)
	r.TokenURL = tokenURL
	r.Token.Expiry = time.Now().Add(-time.Hour)
	return r
}

// An expired token is refreshed on Token, and the new access token and
// the rotated refresh token are saved: a single-use refresh token that
// was not would leave the next run with a spent one.
func TestStoredRefreshSaves(t *testing.T) {
	te := newTokenEndpoint(t, 200, `{"access_token":"access-2","refresh_token":"refresh-2","token_type":"Bearer","expires_in":3600}`)
	const serverURL = "https://mcp.example.com/mcp"
	h, s := storedWith(t, expiredRecord(serverURL, te.URL))
	tok, err := h.Token()
	if err != nil {
		t.Fatal(err)
	}
	if tok.AccessToken != "access-2" {
		t.Errorf("Token = %q, want the refreshed access-2", tok.AccessToken)
	}
	if reqs := te.requests(); len(reqs) != 1 || reqs[0].Get("grant_type") != "refresh_token" || reqs[0].Get("refresh_token") != "refresh-1" {
		t.Errorf("the token endpoint got %v, want one refresh with refresh-1", reqs)
	}
	raw, err := os.ReadFile(s.path(serverURL))
	if err != nil {
		t.Fatal(err)
	}
	var saved Record
	if err := json.Unmarshal(raw, &saved); err != nil {
		t.Fatal(err)
	}
	if saved.Token.AccessToken != "access-2" || saved.Token.RefreshToken != "refresh-2" || !saved.Token.Expiry.After(time.Now()) {
		t.Errorf("the store holds %+v after the refresh, want access-2, refresh-2 and the new expiry:\n%s", saved.Token, raw)
	}
	if saved.ClientID != "client-1" || saved.Issuer != "https://as.example.com" || saved.TokenURL != te.URL {
		t.Errorf("the refresh lost the rest of the record: %s", raw)
	}
	// The fresh token is used as it is until it expires.
	if tok, err := h.Token(); err != nil || tok.AccessToken != "access-2" || len(te.requests()) != 1 {
		t.Errorf("a second Token = %v, %v after %d refreshes; want access-2 without another", tok, err, len(te.requests()))
	}
}

// A refresh that issues no new refresh token keeps the old one.
func TestStoredRefreshKeepsRefreshToken(t *testing.T) {
	te := newTokenEndpoint(t, 200, `{"access_token":"access-2","token_type":"Bearer","expires_in":3600}`)
	h, s := storedWith(t, expiredRecord("https://mcp.example.com/mcp", te.URL))
	if _, err := h.Token(); err != nil {
		t.Fatal(err)
	}
	rec, err := s.Load("https://mcp.example.com/mcp")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Token.AccessToken != "access-2" || rec.Token.RefreshToken != "refresh-1" {
		t.Errorf("saved %+v, want access-2 with the old refresh-1", rec.Token)
	}
}

// A refresh the authorization server refuses (invalid_grant) is Token's
// error; through mcp, that is no token, so the server's 401 reaches
// Authorize, whose error says to log in again.
func TestStoredRefreshRefused(t *testing.T) {
	te := newTokenEndpoint(t, 400, `{"error":"invalid_grant","error_description":"the refresh token was revoked"}`)
	var got []string
	var mu sync.Mutex
	rs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	defer rs.Close()
	h, s := storedWith(t, expiredRecord(rs.URL+"/mcp", te.URL))
	_, err := h.Token()
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "invalid_grant" {
		t.Fatalf("Token = %v, want the invalid_grant refusal", err)
	}
	if rec, _ := s.Load(rs.URL + "/mcp"); rec == nil || rec.Token.AccessToken != "access-1" {
		t.Errorf("a refused refresh changed the store: %+v", rec)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = mcp.Probe(ctx, mcp.ServerSpec{Name: "remote", URL: rs.URL + "/mcp", OAuth: h, Timeout: 5 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "mcpform login remote") {
		t.Fatalf("the probe's error does not say to log in again: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, a := range got {
		if a != "" {
			t.Errorf("a request carried %q after the refresh was refused", a)
		}
	}
	if len(got) == 0 {
		t.Error("the server got no request")
	}
}

func challenge(status int, wwwAuthenticate string) *http.Response {
	resp := &http.Response{StatusCode: status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("refused"))}
	if wwwAuthenticate != "" {
		resp.Header.Set("WWW-Authenticate", wwwAuthenticate)
	}
	return resp
}

func sentWith(token string) *http.Request {
	req, _ := http.NewRequest(http.MethodPost, "https://mcp.example.com/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	return req
}

// A 401 with no login since is a LoginError that names the command.
func TestStoredAuthorizeNeedsLogin(t *testing.T) {
	h, _ := storedWith(t, testRecord("https://mcp.example.com/mcp"))
	err := h.Authorize(context.Background(), sentWith("access-1"), challenge(401, `Bearer error="invalid_token"`))
	var le *LoginError
	if !errors.As(err, &le) || le.Name != "remote" || !strings.Contains(err.Error(), "mcpform login remote") {
		t.Fatalf("Authorize = %v, want a LoginError saying `mcpform login remote`", err)
	}
	// A plain 403 (no insufficient_scope) is a refusal, not a login.
	err = h.Authorize(context.Background(), sentWith("access-1"), challenge(403, ""))
	if !errors.As(err, &le) || !strings.Contains(err.Error(), "HTTP 403") {
		t.Errorf("Authorize on a 403 = %v", err)
	}
}

// Another process's login since the token was loaded is taken up: the
// request is made again with it.
func TestStoredAuthorizeAdoptsNewerLogin(t *testing.T) {
	const serverURL = "https://mcp.example.com/mcp"
	h, s := storedWith(t, testRecord(serverURL))
	if tok, _ := h.Token(); tok.AccessToken != "access-1" {
		t.Fatalf("Token = %v", tok)
	}
	newer := testRecord(serverURL)
	newer.Token = Token{AccessToken: "access-9", RefreshToken: "refresh-9", Expiry: time.Now().Add(time.Hour)}
	if err := s.Save(newer); err != nil {
		t.Fatal(err)
	}
	if err := h.Authorize(context.Background(), sentWith("access-1"), challenge(401, "Bearer")); err != nil {
		t.Fatalf("Authorize with a newer login saved: %v", err)
	}
	if tok, err := h.Token(); err != nil || tok.AccessToken != "access-9" {
		t.Errorf("Token after the newer login = %v, %v; want access-9", tok, err)
	}
	// The newer login refused too: nothing newer, so log in.
	if err := h.Authorize(context.Background(), sentWith("access-9"), challenge(401, "Bearer")); !errors.As(err, new(*LoginError)) {
		t.Errorf("Authorize when the newer token is refused too = %v, want a LoginError", err)
	}
}

// A 403 insufficient_scope notes the scopes for the next login (the
// union with what was noted before) and says to log in.
func TestStoredAuthorizeStepUp(t *testing.T) {
	const serverURL = "https://mcp.example.com/mcp"
	h, s := storedWith(t, testRecord(serverURL))
	err := h.Authorize(context.Background(), sentWith("access-1"), challenge(403, `Bearer error="insufficient_scope", scope="write admin"`))
	if !errors.As(err, new(*LoginError)) || !strings.Contains(err.Error(), `"admin"`) || !strings.Contains(err.Error(), "mcpform login remote") {
		t.Fatalf("Authorize on insufficient_scope = %v", err)
	}
	rec, err := s.Load(serverURL)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rec.StepUp, []string{"write", "admin"}) {
		t.Errorf("the store's StepUp is %v, want [write admin]", rec.StepUp)
	}
	if rec.Token.AccessToken != "access-1" {
		t.Errorf("the step-up changed the token: %+v", rec.Token)
	}
}

// run refuses a login from an authorization server the lock does not
// name.
func TestForRunIssuer(t *testing.T) {
	const serverURL = "https://mcp.example.com/mcp"
	s := Store{Dir: t.TempDir()}
	if err := s.Save(testRecord(serverURL)); err != nil {
		t.Fatal(err)
	}
	client := mcp.HTTPClient(&url.URL{Scheme: "https", Host: "mcp.example.com"})
	if _, err := ForRun("remote", serverURL, []string{"https://as.example.com"}, s, client); err != nil {
		t.Errorf("ForRun with the locked issuer: %v", err)
	}
	_, err := ForRun("remote", serverURL, []string{"https://other-as.example.com"}, s, client)
	if !errors.As(err, new(*LoginError)) || !strings.Contains(err.Error(), "mcpform plan") || !strings.Contains(err.Error(), "other-as.example.com") {
		t.Errorf("ForRun with another issuer locked = %v", err)
	}
	if _, err := ForRun("remote", serverURL+"/x", []string{"https://as.example.com"}, s, client); !errors.As(err, new(*LoginError)) || !strings.Contains(err.Error(), "nobody has logged in") {
		t.Errorf("ForRun without a login = %v", err)
	}
}

// plan and verify refuse the login when the server's metadata no longer
// names its issuer, and take it, with what the metadata says, when it
// does.
func TestForProbeIssuer(t *testing.T) {
	var issuers []string
	var mu sync.Mutex
	var origin string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/oauth-protected-resource/mcp" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		doc := prmDoc(origin+"/mcp", issuers...)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, doc)
	}))
	defer ts.Close()
	origin = ts.URL
	serverURL := ts.URL + "/mcp"
	s := Store{Dir: t.TempDir()}
	if err := s.Save(testRecord(serverURL)); err != nil {
		t.Fatal(err)
	}
	client := mcp.HTTPClient(&url.URL{Scheme: "http", Host: strings.TrimPrefix(ts.URL, "http://")})

	issuers = []string{"https://as.example.com", "https://as2.example.com"}
	h, id, err := ForProbe(context.Background(), "remote", serverURL, s, client)
	if err != nil || h == nil || id.Resource != serverURL || !slices.Equal(id.Issuers, issuers) {
		t.Fatalf("ForProbe = %v, %+v, %v", h, id, err)
	}
	mu.Lock()
	issuers = []string{"https://as2.example.com"}
	mu.Unlock()
	_, _, err = ForProbe(context.Background(), "remote", serverURL, s, client)
	if !errors.As(err, new(*LoginError)) || !strings.Contains(err.Error(), "as2.example.com") || !strings.Contains(err.Error(), "mcpform login remote") {
		t.Errorf("ForProbe when the metadata dropped the login's issuer = %v", err)
	}
}

// Two handlers of one login (two `mcpform run`s, or plan and run) whose
// token has expired refresh it once between them: the second finds the
// first's refreshed token and takes it up, so a single-use refresh token
// is never spent twice (which an authorization server may take for a
// stolen one, and revoke the grant).
func TestStoredRefreshOnceAcrossHandlers(t *testing.T) {
	var refreshes atomic.Int32
	te := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := refreshes.Add(1)
		time.Sleep(50 * time.Millisecond) // the other handler arrives meanwhile
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"access_token":"access-%d","refresh_token":"refresh-%d","token_type":"Bearer","expires_in":3600}`, n+1, n+1)
	}))
	defer te.Close()
	first, s := storedWith(t, expiredRecord("https://mcp.example.com/mcp", te.URL))
	u, _ := url.Parse(te.URL)
	second, err := NewStored("remote", "https://mcp.example.com/mcp", s, mcp.HTTPClient(u))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	toks := make([]string, 2)
	for i, h := range []*Stored{first, second} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tok, err := h.Token()
			if err != nil {
				t.Error(err)
				return
			}
			toks[i] = tok.AccessToken
		}()
	}
	wg.Wait()
	if n := refreshes.Load(); n != 1 || toks[0] != toks[1] {
		t.Errorf("%d refreshes, tokens %q; want one refresh whose token both use", n, toks)
	}
}
