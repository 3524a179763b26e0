package oauth

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/mcpform/mcpform/mcp"
)

// prmServer serves the protected resource metadata documents of paths
// (each a JSON value, with {{ORIGIN}} replaced by the server's origin);
// every other path is 404.
func prmServer(t *testing.T, paths map[string]string) string {
	t.Helper()
	var origin string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		doc, ok := paths[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(strings.ReplaceAll(doc, "{{ORIGIN}}", origin)))
	}))
	t.Cleanup(ts.Close)
	origin = ts.URL
	return ts.URL
}

func prmDoc(resource string, issuers ...string) string {
	b, _ := json.Marshal(map[string]any{"resource": resource, "authorization_servers": issuers})
	return string(b)
}

func discover(t *testing.T, serverURL, metadataURL string) (*Identity, error) {
	t.Helper()
	u, err := url.Parse(serverURL)
	if err != nil {
		t.Fatal(err)
	}
	return Discover(context.Background(), mcp.HTTPClient(u), serverURL, metadataURL)
}

// Discover finds the protected resource metadata where RFC 9728 puts it
// (under the endpoint's path first, then at the root) or where the
// server's challenge said, and takes its resource and issuers as they
// are; a server without any is a 2025-03-26 server, its own
// authorization server at its origin.
func TestDiscoverFindsMetadata(t *testing.T) {
	const as = "https://as.example.com"
	t.Run("path", func(t *testing.T) {
		origin := prmServer(t, map[string]string{
			"/.well-known/oauth-protected-resource/mcp": prmDoc("{{ORIGIN}}/mcp", as),
			"/.well-known/oauth-protected-resource":     prmDoc("{{ORIGIN}}", "https://root-as.example.com"),
		})
		id, err := discover(t, origin+"/mcp", "")
		if err != nil {
			t.Fatal(err)
		}
		if id.Resource != origin+"/mcp" || !slices.Equal(id.Issuers, []string{as}) {
			t.Errorf("got %+v, want the path-based metadata's resource and issuer", id)
		}
	})
	t.Run("root", func(t *testing.T) {
		origin := prmServer(t, map[string]string{"/.well-known/oauth-protected-resource": prmDoc("{{ORIGIN}}", as, "https://as2.example.com")})
		id, err := discover(t, origin+"/mcp", "")
		if err != nil {
			t.Fatal(err)
		}
		if id.Resource != origin || !slices.Equal(id.Issuers, []string{as, "https://as2.example.com"}) {
			t.Errorf("got %+v, want the root metadata's resource and issuers", id)
		}
	})
	t.Run("explicit", func(t *testing.T) {
		origin := prmServer(t, map[string]string{
			"/meta/prm":                             prmDoc("{{ORIGIN}}/mcp", as),
			"/.well-known/oauth-protected-resource": prmDoc("{{ORIGIN}}", "https://root-as.example.com"),
		})
		id, err := discover(t, origin+"/mcp", origin+"/meta/prm")
		if err != nil {
			t.Fatal(err)
		}
		if id.Resource != origin+"/mcp" || !slices.Equal(id.Issuers, []string{as}) {
			t.Errorf("got %+v, want the metadata the challenge named", id)
		}
	})
	t.Run("fallback", func(t *testing.T) {
		origin := prmServer(t, nil)
		id, err := discover(t, origin+"/mcp", "")
		if err != nil {
			t.Fatal(err)
		}
		if id.Resource != origin+"/mcp" || !slices.Equal(id.Issuers, []string{origin}) {
			t.Errorf("got %+v, want the 2025-03-26 fallback (the url's origin as issuer)", id)
		}
	})
}

// Metadata a server publishes and that cannot be trusted is refused, not
// passed over for the next place or the 2025-03-26 fallback: that would
// pin, and send the user to, an authorization server the server never
// named.
func TestDiscoverRefusesBadMetadata(t *testing.T) {
	for name, doc := range map[string]string{
		"no authorization server": prmDoc("{{ORIGIN}}/mcp"),
		"http issuer":             prmDoc("{{ORIGIN}}/mcp", "http://as.example.com"),
		"javascript issuer":       prmDoc("{{ORIGIN}}/mcp", "javascript:alert(1)"),
		"issuer with a query":     prmDoc("{{ORIGIN}}/mcp", "https://as.example.com/?tenant=1"),
		"issuer with a fragment":  prmDoc("{{ORIGIN}}/mcp", "https://as.example.com/#x"),
		"issuer with userinfo":    prmDoc("{{ORIGIN}}/mcp", "https://u:p@as.example.com"),
		"another resource":        prmDoc("https://other.example.com/mcp", "https://as.example.com"),
		"not JSON metadata":       `{"resource": 1}`,
	} {
		t.Run(name, func(t *testing.T) {
			origin := prmServer(t, map[string]string{"/.well-known/oauth-protected-resource/mcp": doc})
			id, err := discover(t, origin+"/mcp", "")
			if err == nil {
				t.Fatalf("Discover accepted %s: %+v", doc, id)
			}
			if strings.ContainsAny(err.Error(), "\x00\x1b\n") {
				t.Errorf("the error is not escaped: %q", err)
			}
		})
	}
}

// checkIssuer takes https issuers, and http only to a loopback address.
func TestCheckIssuer(t *testing.T) {
	for _, ok := range []string{"https://as.example.com", "https://as.example.com/tenant/1", "http://127.0.0.1:8080", "http://localhost:9000/as", "http://[::1]:1"} {
		if err := checkIssuer(ok); err != nil {
			t.Errorf("checkIssuer(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "as.example.com", "http://as.example.com", "http://10.0.0.1", "ftp://as.example.com", "javascript:alert(1)",
		"file:///etc/passwd", "https://as.example.com?x=1", "https://as.example.com#f", "https://user@as.example.com", "https:///path"} {
		if err := checkIssuer(bad); err == nil {
			t.Errorf("checkIssuer(%q) accepted it", bad)
		}
	}
}

// A metadata URL mcpform cannot fetch (here: a redirect to another
// origin) is an error, not "no metadata here": passing over it would pin
// the server's own origin as its authorization server, which it never
// named.
func TestDiscoverFailedFetchIsNoFallback(t *testing.T) {
	other := prmServer(t, map[string]string{"/.well-known/oauth-protected-resource/mcp": `{"resource":"x","authorization_servers":["https://as.example.com"]}`})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other+r.URL.Path, http.StatusFound)
	}))
	defer ts.Close()
	u, _ := url.Parse(ts.URL + "/mcp")
	id, err := Discover(context.Background(), mcp.HTTPClient(u), ts.URL+"/mcp", "")
	if err == nil || !strings.Contains(err.Error(), "another origin") {
		t.Errorf("Discover = %+v, %v; want the refused redirect as the error", id, err)
	}
}
