package oauth

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/mcpform/mcpform/internal/escape"
)

// Identity is what the lock pins of a server's authorization: the
// protected resource it names and the authorization servers it sends its
// clients to (RFC 9728). A server that moves its authorization to another
// issuer must be reviewed again.
type Identity struct {
	Resource string
	Issuers  []string
}

// Discover reads the protected resource metadata of the server at
// serverURL: from metadataURL when a challenge named one (a login records
// it), else from the well-known locations (under the endpoint's path,
// then at the root). A server with none is a 2025-03-26 server, its own
// authorization server at its origin.
func Discover(ctx context.Context, client *http.Client, serverURL, metadataURL string) (*Identity, error) {
	u, err := url.Parse(serverURL)
	if err != nil {
		return nil, err
	}
	// A metadata endpoint that trickles its answer must not hold plan.
	ctx, cancel := context.WithTimeout(ctx, discoverTimeout)
	defer cancel()
	type candidate struct{ meta, resource string }
	var tries []candidate
	if metadataURL != "" {
		tries = append(tries, candidate{metadataURL, serverURL})
	}
	at := *u
	at.RawQuery, at.Fragment = "", ""
	at.Path = "/.well-known/oauth-protected-resource/" + strings.TrimLeft(u.Path, "/")
	tries = append(tries, candidate{at.String(), serverURL})
	at.Path = "/.well-known/oauth-protected-resource"
	root := *u
	root.Path, root.RawQuery, root.Fragment = "", "", ""
	tries = append(tries, candidate{at.String(), root.String()})
	for _, c := range tries {
		prm, err := fetchPRM(ctx, client, c.meta)
		if err != nil {
			return nil, err
		}
		if prm == nil {
			continue
		}
		if prm.Resource != c.resource {
			// RFC 9728, section 3.3: metadata for another resource is
			// not this server's.
			return nil, fmt.Errorf("the protected resource metadata at %s is for the resource %q, not %q: refused", escape.String(c.meta), escape.String(prm.Resource), escape.String(c.resource))
		}
		if len(prm.AuthorizationServers) == 0 {
			return nil, fmt.Errorf("the protected resource metadata at %s names no authorization server", escape.String(c.meta))
		}
		for _, as := range prm.AuthorizationServers {
			if err := checkIssuer(as); err != nil {
				return nil, fmt.Errorf("the protected resource metadata at %s: %v", escape.String(c.meta), err)
			}
		}
		return &Identity{Resource: prm.Resource, Issuers: prm.AuthorizationServers}, nil
	}
	return &Identity{Resource: serverURL, Issuers: []string{root.String()}}, nil
}

// discoverTimeout bounds reading a server's metadata, every place tried.
const discoverTimeout = 30 * time.Second

// maxMetadata bounds a protected resource metadata document.
const maxMetadata = 1 << 20

// fetchPRM reads the protected resource metadata at metaURL: nil when
// there is none there (a status other than 200, a body that is not
// JSON), so that the next place is tried. What a server does
// publish there and mcpform cannot read is an error: passing over it for
// the next place, or for the 2025-03-26 fallback, would pin an
// authorization server the server never named. (The SDK's
// GetProtectedResourceMetadata tells neither apart in its errors.)
func fetchPRM(ctx context.Context, client *http.Client, metaURL string) (*oauthex.ProtectedResourceMetadata, error) {
	u, err := url.Parse(metaURL)
	if err != nil || u.Host == "" || !(u.Scheme == "https" || (u.Scheme == "http" && loopback(u.Hostname()))) {
		return nil, fmt.Errorf("the protected resource metadata url %q is not an https URL: refused", escape.String(metaURL))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, metaURL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		// Not "none here": a refused address or redirect, or a TLS
		// failure, is no answer to pass over.
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("reading the protected resource metadata at %s: %s", escape.String(metaURL), escape.String(err.Error()))
	}
	defer resp.Body.Close()
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusOK || ct != "application/json" {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadata+1))
	if err != nil {
		return nil, fmt.Errorf("reading the protected resource metadata at %s: %v", escape.String(metaURL), err)
	}
	if len(b) > maxMetadata {
		return nil, fmt.Errorf("the protected resource metadata at %s is larger than %d bytes: refused", escape.String(metaURL), maxMetadata)
	}
	var prm oauthex.ProtectedResourceMetadata
	if err := json.Unmarshal(b, &prm); err != nil {
		return nil, fmt.Errorf("the protected resource metadata at %s is not RFC 9728 metadata: %s", escape.String(metaURL), escape.String(err.Error()))
	}
	return &prm, nil
}

// checkIssuer refuses an authorization server identifier that is not an
// https URL (or http to a loopback address, as for the server itself),
// or that carries a query or fragment (RFC 8414, section 2).
func checkIssuer(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("%q is not an authorization server identifier", escape.String(s))
	}
	if u.Scheme != "https" && !(u.Scheme == "http" && loopback(u.Hostname())) {
		return fmt.Errorf("the authorization server %q is not https", escape.String(s))
	}
	return nil
}
