package oauth

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/mcp"
)

// LoginConfig says whom to log in to, and how.
type LoginConfig struct {
	Name string // the server's name in mcp.hcl
	URL  string // its endpoint
	// Headers are the server's fixed headers (mcp.hcl's headers).
	Headers map[string]string
	// Scopes to ask for; nil asks for what the server names (its
	// challenge, else its metadata's scopes_supported).
	Scopes []string
	// ClientID (with ClientSecret, if it has one) is a client registered
	// with the authorization server beforehand; ClientMetadataURL a
	// client ID metadata document mcpform is known by. Without either,
	// mcpform registers itself (RFC 7591) where the server allows it.
	ClientID          string
	ClientSecret      string
	ClientMetadataURL string
	Store             Store
	// Open shows the authorization URL to the user (a browser); Login has
	// printed it to Out already. nil only prints it.
	Open func(url string) error
	Out  io.Writer
	// Timeout bounds the wait for the user; default 5 minutes.
	Timeout time.Duration
}

// Login runs the authorization code flow for the server (PKCE S256, the
// resource parameter, a loopback redirect) and saves what it got.
func Login(ctx context.Context, cfg LoginConfig) (*Record, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, err
	}
	client := mcp.HTTPClient(u)
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()

	prior, _ := cfg.Store.Load(cfg.URL)
	cb, err := listenLoopback()
	if err != nil {
		return nil, err
	}
	defer cb.close()

	var got struct {
		cfg   *oauth2.Config
		token *oauth2.Token
	}
	hcfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL: cb.redirect,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			return cb.fetch(ctx, cfg, args.URL)
		},
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{
				ClientName:    "mcpform",
				RedirectURIs:  []string{cb.redirect},
				GrantTypes:    []string{"authorization_code", "refresh_token"},
				ResponseTypes: []string{"code"},
			},
		},
		ScopeFilter: func(discovered []string) []string {
			base := discovered
			if cfg.Scopes != nil {
				base = cfg.Scopes
			}
			if prior != nil {
				base = union(base, prior.StepUp)
			}
			return base
		},
		RequestRefreshToken: true,
		Client:              client,
		NewTokenSource: func(ctx context.Context, c *oauth2.Config, t *oauth2.Token) (oauth2.TokenSource, error) {
			got.cfg, got.token = c, t
			return oauth2.StaticTokenSource(t), nil
		},
	}
	if cfg.ClientMetadataURL != "" {
		hcfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: cfg.ClientMetadataURL}
	}
	if cfg.ClientID != "" {
		hcfg.PreregisteredClient = &oauthex.ClientCredentials{ClientID: cfg.ClientID}
		if cfg.ClientSecret != "" {
			hcfg.PreregisteredClient.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: cfg.ClientSecret}
		}
	}
	h, err := auth.NewAuthorizationCodeHandler(hcfg)
	if err != nil {
		return nil, err
	}
	// The server says when it needs authorization, and with what scope:
	// a probe (as plan's) meets its first 401 wherever the server puts it
	// (initialize, or only the lists), and the flow runs there.
	w := &watch{OAuthHandler: h}
	_, probeErr := mcp.Probe(ctx, mcp.ServerSpec{Name: cfg.Name, URL: cfg.URL, Headers: cfg.Headers, OAuth: w, Timeout: cfg.Timeout})
	if got.token == nil {
		var own *shownError
		switch {
		case w.err != nil && errors.As(w.err, &own):
			return nil, fmt.Errorf("authorizing mcpform: %w", own)
		case w.err != nil:
			// The SDK's words, which may carry the server's.
			return nil, fmt.Errorf("authorizing mcpform: %s", escape.String(w.err.Error()))
		}
		var pe *mcp.ProbeError
		if errors.As(probeErr, &pe) {
			return nil, pe.Err // the name and the probe are login's own news
		}
		if probeErr != nil {
			return nil, probeErr
		}
		return nil, errors.New("the server answered every request without asking for authorization: it needs no login (remove auth { oauth = true }, or give it a token with bearer_env)")
	}
	if err := checkEndpoint("token", got.cfg.Endpoint.TokenURL); err != nil {
		return nil, err
	}
	id, err := Discover(ctx, client, cfg.URL, w.metadataURL)
	if err != nil {
		return nil, err
	}
	rec := &Record{
		URL:              cfg.URL,
		Resource:         id.Resource,
		Issuer:           id.Issuers[0],
		ResourceMetadata: w.metadataURL,
		ClientID:         got.cfg.ClientID,
		ClientSecret:     got.cfg.ClientSecret,
		TokenURL:         got.cfg.Endpoint.TokenURL,
		AuthStyle:        got.cfg.Endpoint.AuthStyle,
		Scopes:           got.cfg.Scopes,
		Token:            tokenOf(got.token),
	}
	if err := cfg.Store.Save(rec); err != nil {
		return nil, fmt.Errorf("saving the login: %w", err)
	}
	return rec, nil
}

// watch is the SDK's handler, noting what the server's challenge said
// and how the flow ended.
type watch struct {
	auth.OAuthHandler
	metadataURL string // the challenge's resource_metadata
	err         error  // the flow's error, if it failed
}

func (w *watch) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	cs, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	for _, c := range cs {
		if u := c.Params["resource_metadata"]; u != "" && w.metadataURL == "" {
			w.metadataURL = u
		}
	}
	err := w.OAuthHandler.Authorize(ctx, req, resp)
	if err != nil && w.err == nil {
		w.err = err
	}
	return err
}

// callback is the loopback redirect (RFC 8252, section 7.3): a listener
// on 127.0.0.1 that takes one authorization response.
type callback struct {
	ln       net.Listener
	srv      *http.Server
	redirect string
	got      chan url.Values
	// answered is set by the first callback: once the flow has taken it
	// from got, the channel alone would take a second (another tab, a
	// local process racing the browser) and tell it it was authorized.
	answered atomic.Bool
	// state is the state of the authorization request the flow is
	// waiting for: a callback with another (a stray request, a local
	// process that found the port) is refused and does not use up the
	// one answer.
	state atomic.Pointer[string]
}

// expect makes state the one a callback must carry.
func (cb *callback) expect(state string) { cb.state.Store(&state) }

func listenLoopback() (*callback, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the authorization's redirect: %w", err)
	}
	cb := &callback{ln: ln, got: make(chan url.Values, 1),
		redirect: fmt.Sprintf("http://127.0.0.1:%d/callback", ln.Addr().(*net.TCPAddr).Port)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /callback", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if want := cb.state.Load(); want == nil || *want == "" || q.Get("state") != *want {
			http.Error(w, "this is not the answer mcpform is waiting for (its state does not match)", http.StatusBadRequest)
			return
		}
		if !cb.answered.CompareAndSwap(false, true) {
			http.Error(w, "mcpform has had its answer already", http.StatusConflict)
			return
		}
		cb.got <- q // buffered for the one answer
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if e := q.Get("error"); e != "" {
			fmt.Fprintf(w, "<p>mcpform was not authorized: %s. You can close this tab.</p>", html.EscapeString(e))
			return
		}
		fmt.Fprint(w, "<p>mcpform is authorized. You can close this tab.</p>")
	})
	cb.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go cb.srv.Serve(ln)
	return cb, nil
}

func (cb *callback) close() { cb.srv.Close() }

// fetch shows the user the authorization URL and waits for the redirect.
func (cb *callback) fetch(ctx context.Context, cfg LoginConfig, authURL string) (*auth.AuthorizationResult, error) {
	if err := checkAuthURL(authURL); err != nil {
		return nil, err
	}
	if u, err := url.Parse(authURL); err == nil {
		cb.expect(u.Query().Get("state"))
	}
	if cfg.Out != nil {
		fmt.Fprintf(cfg.Out, "To authorize mcpform for %s, open this URL in a browser:\n\n    %s\n\nWaiting up to %v for the browser to come back to %s (Ctrl-C cancels) ...\n", cfg.Name, escape.String(authURL), cfg.Timeout.Round(time.Second), cb.redirect)
	}
	if cfg.Open != nil {
		if err := cfg.Open(authURL); err != nil && cfg.Out != nil {
			fmt.Fprintf(cfg.Out, "(no browser opened: %s)\n", escape.String(err.Error()))
		}
	}
	select {
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, &shownError{fmt.Sprintf("no answer from the authorization server within %v: run mcpform login again, and finish in the browser", cfg.Timeout)}
		}
		return nil, &shownError{"login cancelled"}
	case q := <-cb.got:
		if e := q.Get("error"); e != "" {
			why := e
			if d := q.Get("error_description"); d != "" {
				why += ": " + d
			}
			return nil, &shownError{"the authorization server refused: " + escape.String(why)}
		}
		return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
	}
}

// shownError is an error of login's own whose text is escaped already
// (what the server sent in it), so that it is not escaped twice.
type shownError struct{ msg string }

func (e *shownError) Error() string { return e.msg }

// checkAuthURL refuses to show an authorization URL that is not https (or
// http to a loopback address): the metadata that names it is the
// server's, and a browser opens what it is given.
func checkAuthURL(s string) error { return checkEndpoint("authorization", s) }

// checkEndpoint refuses an endpoint of the authorization server that is
// not https (or http to a loopback address): a token endpoint gets the
// refresh token and the client secret.
func checkEndpoint(what, s string) error {
	if httpsOrLoopback(s) {
		return nil
	}
	return &shownError{fmt.Sprintf("the %s endpoint %q is not an https URL: refused", what, escape.String(s))}
}

func httpsOrLoopback(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Host != "" && (u.Scheme == "https" || (u.Scheme == "http" && loopback(u.Hostname())))
}

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
