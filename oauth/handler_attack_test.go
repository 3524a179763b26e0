package oauth

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpform/mcpform/mcp"
)

// A running `mcpform run` takes up a login made since only when it is
// from an authorization server the lock names: one against a server that
// moved its authorization to another issuer is refused, as at start.
func TestAttackAdoptRefusesUnlockedIssuer(t *testing.T) {
	const serverURL = "https://mcp.example.com/mcp"
	s := Store{Dir: t.TempDir()}
	if err := s.Save(testRecord(serverURL)); err != nil {
		t.Fatal(err)
	}
	client := mcp.HTTPClient(&url.URL{Scheme: "https", Host: "mcp.example.com"})
	h, err := ForRun("remote", serverURL, []string{"https://as.example.com"}, s, client)
	if err != nil {
		t.Fatal(err)
	}
	moved := testRecord(serverURL)
	moved.Issuer = "https://evil-as.example.net"
	moved.TokenURL = "https://evil-as.example.net/token"
	moved.Token = Token{AccessToken: "access-evil", RefreshToken: "refresh-evil", Expiry: time.Now().Add(time.Hour)}
	if err := s.Save(moved); err != nil {
		t.Fatal(err)
	}
	err = h.Authorize(context.Background(), sentWith("access-1"), challenge(401, `Bearer error="invalid_token"`))
	if err == nil {
		tok, _ := h.Token()
		t.Errorf("run adopted a login from %q, an issuer mcp.lock does not name, and now sends %q", moved.Issuer, tok.AccessToken)
	}
}

// A refresh the token endpoint refuses is reported by its status and
// error code, never its body: an authorization server (or a proxy in
// front of it) whose error page echoes the request form would put the
// refresh token and the client secret into the error the client of
// `mcpform run` (or plan) gets.
func TestAttackRefreshErrorHidesSecrets(t *testing.T) {
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, "upstream error, request was: "+r.PostForm.Encode())
	}))
	defer as.Close()
	rs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	defer rs.Close()
	rec := expiredRecord(rs.URL+"/mcp", as.URL+"/token")
	rec.AuthStyle = 1 // AuthStyleInParams: the secret is in the form
	h, _ := storedWith(t, rec)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := mcp.Probe(ctx, mcp.ServerSpec{Name: "remote", URL: rs.URL + "/mcp", OAuth: h, Timeout: 5 * time.Second})
	if err == nil {
		t.Fatal("the probe succeeded")
	}
	for _, secret := range []string{"refresh-1", "client-secret"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the error holds %q:\n%v", secret, err)
		}
	}
}

// The loopback redirect takes only the answer with the state of the
// authorization request: a local process (or a web page that finds the
// port) that asks first, without knowing it, neither ends the login nor
// keeps the browser's real answer out.
func TestAttackCallbackWrongState(t *testing.T) {
	cb, err := listenLoopback()
	if err != nil {
		t.Fatal(err)
	}
	defer cb.close()
	const authURL = "https://as.example.com/authorize?client_id=x&state=the-real-state"
	if code, _ := callbackGet(t, cb, "code=junk&state=guess"); code != http.StatusOK {
		t.Logf("the stray callback got %d", code)
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		http.Get(cb.redirect + "?code=real&state=the-real-state")
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	res, err := cb.fetch(ctx, LoginConfig{Name: "remote"}, authURL)
	if err != nil || res.Code != "real" {
		t.Errorf("fetch = %+v, %v; want the browser's answer (state the-real-state), not the stray one", res, err)
	}
}

// A token endpoint that sends its headers and then stalls does not hold
// the server's requests past their deadline (the request waits for the
// refresh within its own context, and the refresh is bounded too): a
// probe with a 2 s timeout returns.
func TestAttackStalledRefresh(t *testing.T) {
	release := make(chan struct{})
	var refreshing sync.WaitGroup
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		refreshing.Add(1)
		defer refreshing.Done()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
		io.WriteString(w, `{"access_token":`)
		w.(http.Flusher).Flush()
		<-release
	}))
	rs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	defer rs.Close()
	h, _ := storedWith(t, expiredRecord(rs.URL+"/mcp", as.URL+"/token"))
	// Before the store's directory is removed: the refreshes the probe
	// left behind end (each may still take the record's lock file).
	t.Cleanup(func() {
		close(release)
		refreshing.Wait()
		time.Sleep(100 * time.Millisecond) // a refresh queued behind the last one
		refreshing.Wait()
		as.Close()
	})
	done := make(chan error, 1)
	go func() {
		_, err := mcp.Probe(context.Background(), mcp.ServerSpec{Name: "remote", URL: rs.URL + "/mcp", OAuth: h, Timeout: 2 * time.Second})
		done <- err
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Error("a probe with a 2 s timeout is still waiting after 10 s: the refresh has no deadline")
	}
}
