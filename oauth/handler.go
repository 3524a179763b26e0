package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// Stored is the OAuth handler of plan, verify and run: the access token
// of the last login, refreshed when it expires (and the refreshed token
// saved back, since a refresh token may be single-use). It never starts a
// login: a server that refuses the token gets an error that says to run
// `mcpform login`, and a server that asks for more scope has it noted for
// the next login.
type Stored struct {
	name   string // the server's name, for messages
	store  Store
	client *http.Client

	// issuers are the authorization servers the lock names (ForRun): a
	// login made since that is from another is not taken up. nil takes
	// any (plan and verify check the issuer themselves).
	issuers []string

	mu     sync.Mutex
	rec    *Record
	source oauth2.TokenSource
}

// refreshTimeout bounds one refresh at the token endpoint (its answer's
// body included: x/oauth2 sets no deadline of its own).
const refreshTimeout = 30 * time.Second

// LoginError is a server that needs `mcpform login NAME`.
type LoginError struct {
	Name string
	Why  string
}

func (e *LoginError) Error() string {
	return fmt.Sprintf("%s: run `mcpform login %s`", e.Why, e.Name)
}

// NewStored returns the handler of the server name at url, from its
// login record. client makes the refresh requests (mcp.HTTPClient).
func NewStored(name, url string, store Store, client *http.Client) (*Stored, error) {
	rec, err := store.Load(url)
	if errors.Is(err, ErrNoLogin) {
		return nil, &LoginError{Name: name, Why: fmt.Sprintf("%s signs in with OAuth and nobody has logged in to it here", name)}
	}
	if err != nil {
		return nil, err
	}
	bounded := *client
	bounded.Timeout = refreshTimeout
	s := &Stored{name: name, store: store, client: &bounded}
	s.adopt(rec)
	return s, nil
}

// Record is the login the handler holds (its current token included).
func (s *Stored) Record() *Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := *s.rec
	return &r
}

// adopt makes rec the handler's login; s.mu held or s not yet shared.
func (s *Stored) adopt(rec *Record) {
	s.rec = rec
	cfg := &oauth2.Config{
		ClientID:     rec.ClientID,
		ClientSecret: rec.ClientSecret,
		Endpoint:     oauth2.Endpoint{TokenURL: rec.TokenURL, AuthStyle: rec.AuthStyle},
	}
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, s.client)
	s.source = cfg.TokenSource(ctx, rec.Token.oauth2())
}

// TokenSource is the handler itself: each Token is the stored one, or a
// refreshed one once it has expired.
func (s *Stored) TokenSource(context.Context) (oauth2.TokenSource, error) { return s, nil }

// Token returns the access token, refreshing it when it has expired.
func (s *Stored) Token() (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.rec.Token.oauth2().Valid() {
		// A refresh: one process at a time (a refresh token may be
		// single-use, and an authorization server that sees one used
		// twice may revoke the grant), and none when another has just
		// refreshed it.
		unlock := s.store.lock(s.rec.URL)
		defer unlock()
		if rec, err := s.store.Load(s.rec.URL); err == nil && rec.Token.AccessToken != s.rec.Token.AccessToken && rec.Token.oauth2().Valid() &&
			(s.issuers == nil || slices.Contains(s.issuers, rec.Issuer)) {
			s.adopt(rec)
		}
	}
	tok, err := s.source.Token()
	if err != nil {
		return nil, err
	}
	if tok.AccessToken != s.rec.Token.AccessToken {
		rec := *s.rec
		rec.Token = tokenOf(tok)
		if rec.Token.RefreshToken == "" {
			// A refresh that issues no new refresh token keeps the old.
			rec.Token.RefreshToken = s.rec.Token.RefreshToken
		}
		if err := s.store.Save(&rec); err != nil {
			return nil, fmt.Errorf("saving the refreshed OAuth token: %w", err)
		}
		s.rec = &rec
	}
	return tok, nil
}

// Authorize is told of a 401 or 403. A login since the token was loaded
// (another terminal's `mcpform login`) is taken up, and the request made
// again; otherwise the answer is a LoginError: the token was refused, or
// the server needs more scope, which the next login asks for.
func (s *Stored) Authorize(_ context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	s.mu.Lock()
	defer s.mu.Unlock()
	sent := strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")
	if rec, err := s.store.Load(s.rec.URL); err == nil && rec.Token.AccessToken != sent && rec.Token.AccessToken != s.rec.Token.AccessToken {
		if s.issuers != nil && !slices.Contains(s.issuers, rec.Issuer) {
			return &LoginError{Name: s.name, Why: fmt.Sprintf("the login of %s made since is from %q, and mcp.lock names %s: review the move with mcpform plan, or", s.name, rec.Issuer, quoteAll(s.issuers))}
		}
		s.adopt(rec)
		return nil
	}
	if resp.StatusCode == http.StatusForbidden {
		if need := challengeScopes(challenges, "insufficient_scope"); len(need) > 0 {
			rec := *s.rec
			rec.StepUp = union(rec.StepUp, need)
			if err := s.store.Save(&rec); err != nil {
				return err
			}
			s.rec = &rec
			return &LoginError{Name: s.name, Why: fmt.Sprintf("%s needs more OAuth scope for this request (%s)", s.name, quoteAll(need))}
		}
		return &LoginError{Name: s.name, Why: fmt.Sprintf("%s refused the request with HTTP 403", s.name)}
	}
	return &LoginError{Name: s.name, Why: fmt.Sprintf("%s refused mcpform's OAuth token (it expired and could not be refreshed, or it was revoked)", s.name)}
}

// challengeScopes returns the scope of a Bearer challenge with the given
// error ("" for any).
func challengeScopes(cs []oauthex.Challenge, wantErr string) []string {
	for _, c := range cs {
		if c.Scheme != "bearer" || (wantErr != "" && c.Params["error"] != wantErr) {
			continue
		}
		if sc := strings.Fields(c.Params["scope"]); len(sc) > 0 {
			return sc
		}
	}
	return nil
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func quoteAll(sc []string) string {
	q := make([]string, len(sc))
	for i, s := range sc {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, " ")
}

// ForProbe is the handler plan and verify probe the server name at url
// with, and what the server advertises of its authorization now, which
// the lock pins. A server that now names an authorization server other
// than the one the login's token came from needs a new login (and its
// plan shows MCP-AUTHORIZATION-CHANGED).
func ForProbe(ctx context.Context, name, url string, store Store, client *http.Client) (*Stored, *Identity, error) {
	h, err := NewStored(name, url, store, client)
	if err != nil {
		return nil, nil, err
	}
	rec := h.Record()
	id, err := Discover(ctx, client, url, rec.ResourceMetadata)
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s's OAuth metadata: %w", name, err)
	}
	if !slices.Contains(id.Issuers, rec.Issuer) {
		return nil, nil, &LoginError{Name: name, Why: fmt.Sprintf("%s now names the authorization server(s) %s, and mcpform's token is from %q", name, quoteAll(id.Issuers), rec.Issuer)}
	}
	return h, id, nil
}

// ForRun is the handler `mcpform run` serves the server name at url
// with: the login's, which must be from one of the authorization
// servers the lock names (else the server moved its authorization since
// it was reviewed, and plan must show it).
func ForRun(name, url string, issuers []string, store Store, client *http.Client) (*Stored, error) {
	h, err := NewStored(name, url, store, client)
	if err != nil {
		return nil, err
	}
	if rec := h.Record(); !slices.Contains(issuers, rec.Issuer) {
		return nil, &LoginError{Name: name, Why: fmt.Sprintf("mcpform's token for %s is from %q, and mcp.lock names %s: if the server moved its authorization, review it with mcpform plan; else", name, rec.Issuer, quoteAll(issuers))}
	}
	h.issuers = append([]string{}, issuers...)
	return h, nil
}
