package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"
)

// tokenHandler is an OAuthHandler with one token: none until the first
// 401 when lazy (as a login's flow gets it there), else from the start.
type tokenHandler struct {
	token string

	mu         sync.Mutex
	have       bool
	authorized int // Authorize calls
}

func (a *tokenHandler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.have {
		return nil, nil
	}
	return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: a.token, TokenType: "Bearer"}), nil
}

func (a *tokenHandler) Authorize(_ context.Context, _ *http.Request, resp *http.Response) error {
	resp.Body.Close()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.authorized++
	a.have = true
	return nil
}

// bearerSSEServer is the Go SDK's HTTP+SSE server (2024-11-05) behind a
// check of the bearer token on every request, the stream's GET and the
// message POSTs alike; it counts the requests that carried it.
func bearerSSEServer(t *testing.T, token string) (url string, carried func() (with, without int)) {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "sse-oauth", Version: "1.0.0"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echo the text"}, func(ctx context.Context, req *sdk.CallToolRequest, args in) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: args.Text}}}, nil, nil
	})
	sse := sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return s }, nil)
	var mu sync.Mutex
	var with, without int
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		ok := r.Header.Get("Authorization") == "Bearer "+token
		if ok {
			with++
		} else {
			without++
		}
		mu.Unlock()
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="sse"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost && r.URL.Query().Get("sessionid") == "" {
			// initialize's POST to the url: not Streamable HTTP.
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		sse.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/sse", func() (int, int) { mu.Lock(); defer mu.Unlock(); return with, without }
}

// Over the HTTP+SSE transport, as over Streamable HTTP, every request
// carries the OAuth token: the stream's GET and each message's POST.
func TestSSEOAuthToken(t *testing.T) {
	const token = "sse-oauth-token"
	url, carried := bearerSSEServer(t, token)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := Probe(ctx, ServerSpec{Name: "sse", URL: url, Era: EraLegacy, OAuth: &tokenHandler{token: token, have: true}, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if s.Transport != TransportSSE || len(s.Tools) != 1 {
		t.Errorf("transport %q, %d tools; want sse and the echo tool", s.Transport, len(s.Tools))
	}
	if with, without := carried(); without != 0 || with < 3 {
		t.Errorf("%d requests carried the token, %d did not; want every one (the GET and the POSTs)", with, without)
	}

	// Without the handler, the server's refusal says so.
	_, err = Probe(ctx, ServerSpec{Name: "sse", URL: url, Era: EraLegacy, Transport: TransportSSE, Timeout: 5 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("a probe without the token: %v, want the 401", err)
	}
}

// A server locked over HTTP+SSE that first asks for authorization on
// the stream's GET gets the OAuth handler's token there (as mcpform
// login's flow needs), and the GET is made again with it.
func TestSSEOAuthOnStream(t *testing.T) {
	const token = "sse-oauth-token"
	url, _ := bearerSSEServer(t, token)
	a := &tokenHandler{token: token}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := Probe(ctx, ServerSpec{Name: "sse", URL: url, Era: EraLegacy, Transport: TransportSSE, OAuth: a, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	a.mu.Lock()
	authorized := a.authorized
	a.mu.Unlock()
	if len(s.Tools) != 1 || authorized != 1 {
		t.Errorf("%d tools, %d Authorize calls; want the echo tool after one", len(s.Tools), authorized)
	}
}
