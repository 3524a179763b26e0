package lang

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// A remote server: url, headers and the auth block (server.go decodes the
// rest of the server block).

// reservedHeaders are the headers mcpform sets itself on every request to
// a remote server (Streamable HTTP); a server block cannot set them.
var reservedHeaders = []string{
	"Accept", "Authorization", "Content-Length", "Content-Type", "Host", "Last-Event-ID",
	"MCP-Protocol-Version", "Mcp-Method", "Mcp-Name", "Mcp-Session-Id",
}

// credentialHeaders are headers that carry a credential whatever their
// value; so does any header whose name contains one of credentialWords.
var credentialHeaders = []string{"Authorization", "Cookie", "Proxy-Authorization"}
var credentialWords = []string{"token", "secret", "key", "password", "auth"}

// tokenPrefixes start the tokens of well-known services (GitHub, OpenAI
// and Anthropic, Slack, GitLab, AWS access keys, a JWT's header).
var tokenPrefixes = []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "sk-", "xoxb-", "xoxp-", "glpat-", "AKIA", "eyJ"}

// checkURL checks a remote server's url and returns it normalised (see
// Server.URL), or "" after reporting why it cannot be used. A detail never
// repeats the url: it might hold a credential.
func checkURL(a *hcl.Attribute, raw string, diags *hcl.Diagnostics) string {
	bad := func(detail string) string {
		*diags = append(*diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid url",
			Detail:   detail,
			Subject:  a.Expr.Range().Ptr(),
		})
		return ""
	}
	const example = ` for example "https://mcp.example.com/mcp"`
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return bad(fmt.Sprintf("url is not a URL (%v); write the server's endpoint,%s.", err, example))
	}
	switch {
	case u.User != nil:
		return bad(`url must not hold a user name or password ("user:pass@"): mcp.lock would store it in plain text. Remove it, and give the server its token through auth { bearer_env = "NAME" }, which names the environment variable that holds it.`)
	case u.Scheme == "":
		return bad(fmt.Sprintf("url must be an absolute https:// URL,%s.", example))
	case u.Scheme != "https" && u.Scheme != "http":
		return bad(fmt.Sprintf("url's scheme must be https (or http for a loopback host), not %q: mcpform connects to a remote server over Streamable HTTP.", u.Scheme))
	case u.Opaque != "" || u.Hostname() == "":
		return bad(fmt.Sprintf("url needs a host,%s.", example))
	case u.Fragment != "" || strings.HasSuffix(raw, "#"):
		return bad("url must not have a fragment (#…): it is never sent to the server. Remove it.")
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return bad(fmt.Sprintf("url's port must be from 1 to 65535, not %s.", port))
		}
	}
	if u.Scheme == "http" && !isLoopback(host) {
		return bad(fmt.Sprintf("url must use https: over http the requests, and any token, cross the network in the clear. Write https://%s…; http is allowed only for a loopback host (localhost, 127.0.0.0/8, [::1]).", u.Host))
	}
	if (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	u.Host = host
	if port != "" {
		u.Host += ":" + port
	}
	if u.Path == "" {
		u.Path, u.RawPath = "/", ""
	}
	return u.String()
}

// isLoopback reports whether host (without brackets or port) is localhost
// or a loopback address: 127.0.0.0/8 or ::1.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// headers evaluates a remote server's headers: a map of header names to
// values; nil when there are none, or after an error.
func (s *scope) headers(a *hcl.Attribute, diags *hcl.Diagnostics) map[string]string {
	v, ok := s.value(a, diags)
	if !ok {
		return nil
	}
	if v.IsNull() || !(v.Type().IsObjectType() || v.Type().IsMapType()) {
		*diags = append(*diags, typeError(a, `a map of header names to values, for example { "X-Org" = "acme" }`, v))
		return nil
	}
	out := map[string]string{}
	byLower := map[string]string{}
	ok = true
	for it := v.ElementIterator(); it.Next(); {
		k, ev := it.Element()
		name := k.AsString()
		keyRng, valRng := itemRanges(a.Expr, name)
		bad := func(summary, detail string, rng hcl.Range) {
			*diags = append(*diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  summary,
				Detail:   detail,
				Subject:  rng.Ptr(),
			})
			ok = false
		}
		conv, err := convert.Convert(ev, cty.String)
		if err != nil || conv.IsNull() {
			bad("Incorrect attribute value type", fmt.Sprintf("The value of header %q must be a string, not %s.", name, typeName(ev)), valRng)
			continue
		}
		val := conv.AsString()
		lower := strings.ToLower(name)
		switch {
		case !isToken(name):
			bad("Invalid header name", fmt.Sprintf("%q is not an HTTP header name: use letters, digits and !#$%%&'*+-.^_`|~, with no spaces or colon, for example \"X-Org\".", name), keyRng)
		case containsFold(credentialHeaders, name) || containsWord(lower, credentialWords):
			bad("Credential in headers", fmt.Sprintf(`Header %q carries a credential, but mcp.lock stores headers in plain text. Remove it, and give the server its token through auth { bearer_env = "NAME" }, which names the environment variable that holds it (sent as Authorization: Bearer).`, name), keyRng)
		case containsFold(reservedHeaders, name):
			bad("Reserved header", fmt.Sprintf("mcpform sets %q itself on every request to a remote server (%s are its own); remove it from headers.", name, strings.Join(reservedHeaders, ", ")), keyRng)
		case byLower[lower] != "":
			bad("Duplicate header", fmt.Sprintf("%q and %q are the same header (names are case-insensitive); remove one.", byLower[lower], name), keyRng)
		case strings.IndexFunc(val, func(r rune) bool { return (r < 0x20 && r != '\t') || r == 0x7f }) >= 0:
			bad("Invalid header value", fmt.Sprintf("The value of header %q contains a control character (a line break, NUL, …), which no header value can hold; remove it.", name), valRng)
		case looksLikeCredential(val):
			bad("Credential in headers", fmt.Sprintf(`The value of header %q looks like a credential (a Bearer or Basic value, or a long opaque token), but mcp.lock stores headers in plain text. Remove it, and give the server its token through auth { bearer_env = "NAME" }, which names the environment variable that holds it.`, name), valRng)
		}
		byLower[lower] = name
		out[name] = val
	}
	if !ok || len(out) == 0 {
		return nil
	}
	return out
}

// itemRanges are the ranges of the key and of the value of item key of a
// literal object, so that a diagnostic can point at one header; else both
// are the whole expression.
func itemRanges(expr hcl.Expression, key string) (hcl.Range, hcl.Range) {
	if o, ok := expr.(*hclsyntax.ObjectConsExpr); ok {
		for _, item := range o.Items {
			k, d := item.KeyExpr.Value(nil)
			if !d.HasErrors() && k.IsKnown() && !k.IsNull() && k.Type().Equals(cty.String) && k.AsString() == key {
				return item.KeyExpr.Range(), item.ValueExpr.Range()
			}
		}
	}
	return expr.Range(), expr.Range()
}

// isToken reports whether s is an RFC 9110 token, as a field name must be.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

func containsWord(lower string, words []string) bool {
	for _, w := range words {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// looksLikeCredential reports whether a header value is, by its look, a
// credential: an Authorization-style "Bearer …" or "Basic …", a token of a
// well-known service, or a long (20 or more) opaque string of base64, hex
// or token characters with letters and digits and no spaces.
func looksLikeCredential(v string) bool {
	lower := strings.ToLower(v)
	if strings.HasPrefix(lower, "bearer ") || strings.HasPrefix(lower, "basic ") {
		return true
	}
	if len(v) < 20 || strings.ContainsAny(v, " \t") {
		return false
	}
	for _, p := range tokenPrefixes {
		if strings.HasPrefix(v, p) {
			return true
		}
	}
	letters, digits := false, false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
			letters = true
		case '0' <= c && c <= '9':
			digits = true
		case strings.IndexByte("+/=_-", c) >= 0:
		default:
			return false // a dot, colon, … : a version, a date, a media type
		}
	}
	return letters && digits
}

// isScopeToken reports whether s is an OAuth scope token (RFC 6749 3.3):
// printable ASCII but space, double quote and backslash.
func isScopeToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// decodeAuth evaluates a remote server's auth block: exactly one of
// oauth = true (with optional scopes) or bearer_env. It returns nil after
// an error, or when a value is unknown (validate).
func (s *scope) decodeAuth(b *hcl.Block, diags *hcl.Diagnostics) *Auth {
	content, d := b.Body.Content(authSchema)
	*diags = append(*diags, d...)
	if d.HasErrors() {
		return nil
	}
	auth := &Auth{}
	known, ok := true, true // known: every value is (validate); ok: and valid
	oauthA, hasOAuth := content.Attributes["oauth"]
	if hasOAuth {
		v, vok := s.value(oauthA, diags)
		switch conv, err := convert.Convert(v, cty.Bool); {
		case !vok:
			known = false
		case err != nil || conv.IsNull():
			*diags = append(*diags, typeError(oauthA, "true or false", v))
			known = false
		default:
			auth.OAuth = conv.True()
		}
	}
	envA, hasEnv := content.Attributes["bearer_env"]
	if hasEnv {
		if v, vok := s.str(envA, diags); !vok {
			known = false
		} else if checkBearerEnv(envA, v, diags) {
			auth.BearerEnv = v
		} else {
			ok = false
		}
	}
	scopesA, hasScopes := content.Attributes["scopes"]
	if hasScopes {
		if v, vok := s.stringList(scopesA, diags); !vok {
			ok = false
		} else if scopes, sok := checkScopes(scopesA, v, diags); sok {
			auth.Scopes = scopes
		} else {
			ok = false
		}
	}
	client := map[string]*string{"client_id": &auth.ClientID, "client_secret_env": &auth.ClientSecretEnv, "client_metadata_url": &auth.ClientMetadataURL}
	var clientA *hcl.Attribute
	for _, name := range []string{"client_id", "client_secret_env", "client_metadata_url"} {
		a, has := content.Attributes[name]
		if !has {
			continue
		}
		clientA = a
		v, vok := s.str(a, diags)
		if !vok {
			known = false
			continue
		}
		if !checkClientSetting(a, name, v, diags) {
			ok = false
		}
		*client[name] = v
	}
	if !known {
		return nil
	}
	if clientA != nil && !auth.OAuth {
		*diags = append(*diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "OAuth client settings without OAuth",
			Detail:   "client_id, client_secret_env and client_metadata_url say how mcpform signs in with OAuth, so they need oauth = true.",
			Subject:  clientA.Range.Ptr(),
		})
		return nil
	}
	if auth.ClientSecretEnv != "" && auth.ClientID == "" {
		*diags = append(*diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Client secret without a client id",
			Detail:   "client_secret_env is the secret of a pre-registered client: add its client_id, or remove client_secret_env to let mcpform register itself.",
			Subject:  content.Attributes["client_secret_env"].Range.Ptr(),
		})
		return nil
	}
	// Which methods are written, whatever else is wrong with them.
	const methods = `oauth = true (MCP authorization, OAuth 2.1: mcpform signs in through the server's authorization server) or bearer_env = "NAME" (a static token, for CI and servers that take one, read from the environment variable NAME)`
	switch {
	case auth.OAuth && hasEnv:
		*diags = append(*diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Conflicting authentication methods",
			Detail:   fmt.Sprintf("auth takes one method: %s, not both. Remove oauth or bearer_env.", methods),
			Subject:  envA.Range.Ptr(),
		})
		return nil
	case !auth.OAuth && !hasEnv:
		rng := b.DefRange
		if hasOAuth {
			rng = oauthA.Range
		}
		*diags = append(*diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Missing authentication method",
			Detail:   fmt.Sprintf("auth needs %s. Add one, or remove the auth block for a server that needs no authorization.", methods),
			Subject:  rng.Ptr(),
		})
		return nil
	case hasScopes && !auth.OAuth:
		*diags = append(*diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Scopes without OAuth",
			Detail:   "scopes are requested when mcpform signs in with OAuth, so they need oauth = true. A bearer_env token's scopes were fixed when it was made: remove scopes.",
			Subject:  scopesA.Range.Ptr(),
		})
		return nil
	}
	if !ok {
		return nil
	}
	return auth
}

// checkClientSetting checks an OAuth client setting: client_id as the
// authorization server gave it, client_secret_env a variable's name (the
// secret itself would be stored in mcp.lock's digest input), and
// client_metadata_url an https URL with a path (the metadata document's).
func checkClientSetting(a *hcl.Attribute, name, v string, diags *hcl.Diagnostics) bool {
	detail := ""
	switch name {
	case "client_id":
		if v == "" || !isScopeToken(v) {
			detail = "client_id is the identifier the authorization server gave mcpform's registration: printable ASCII without spaces."
		}
	case "client_secret_env":
		if !envName.MatchString(v) || looksLikeToken(v) {
			detail = fmt.Sprintf("client_secret_env names the environment variable that holds the client secret, not the secret: write its name, for example client_secret_env = \"MCP_CLIENT_SECRET\" (got %q).", v)
			if looksLikeToken(v) {
				detail = "client_secret_env names the environment variable that holds the client secret, not the secret: write its name, for example client_secret_env = \"MCP_CLIENT_SECRET\"."
			}
		}
	case "client_metadata_url":
		if u, err := url.Parse(v); err != nil || u.Scheme != "https" || u.Host == "" || u.Path == "" || u.Path == "/" || u.Fragment != "" || u.User != nil {
			detail = "client_metadata_url is the https URL of mcpform's client ID metadata document, with a path, for example \"https://example.com/mcpform/client.json\"."
		}
	}
	if detail == "" {
		return true
	}
	*diags = append(*diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid OAuth client setting", Detail: detail, Subject: a.Expr.Range().Ptr()})
	return false
}

// checkBearerEnv reports whether bearer_env is the name of an environment
// variable (not the token itself, which mcp.lock would store).
func checkBearerEnv(a *hcl.Attribute, v string, diags *hcl.Diagnostics) bool {
	detail := ""
	switch {
	case strings.Contains(v, "=") && envName.MatchString(v[:strings.IndexByte(v, '=')]):
		detail = fmt.Sprintf("bearer_env names the variable, not NAME=value: write %q and set its value in the environment mcpform runs in. The token is never stored in mcp.lock.", v[:strings.IndexByte(v, '=')])
	case looksLikeToken(v):
		// The value is not repeated: it is likely the token itself.
		detail = `bearer_env is the name of the environment variable that holds the token, not the token: mcp.lock would store it in plain text. Write the variable's name, for example bearer_env = "GITHUB_TOKEN", and set its value in the environment mcpform runs in.`
	case !envName.MatchString(v):
		detail = fmt.Sprintf("%q is not a valid environment variable name: bearer_env names the variable that holds the token; use letters, digits and underscores, not starting with a digit.", v)
	default:
		return true
	}
	*diags = append(*diags, &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Invalid environment variable name",
		Detail:   detail,
		Subject:  a.Expr.Range().Ptr(),
	})
	return false
}

// looksLikeToken reports whether an intended environment variable name is
// rather a token: a well-known service's, a Bearer value, or a long string
// mixing lower and upper case and digits, as variable names do not.
func looksLikeToken(v string) bool {
	lower := strings.ToLower(v)
	if strings.HasPrefix(lower, "bearer ") || strings.HasPrefix(lower, "basic ") {
		return true
	}
	for _, p := range tokenPrefixes {
		if len(v) >= 20 && strings.HasPrefix(v, p) {
			return true
		}
	}
	if len(v) < 32 {
		return false
	}
	return strings.ContainsAny(v, "abcdefghijklmnopqrstuvwxyz") && strings.ContainsAny(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") && strings.ContainsAny(v, "0123456789")
}

// checkScopes checks the OAuth scopes to request; an empty list requests
// the server's defaults (nil).
func checkScopes(a *hcl.Attribute, scopes []string, diags *hcl.Diagnostics) ([]string, bool) {
	seen := map[string]bool{}
	ok := true
	for i, sc := range scopes {
		detail := ""
		switch {
		case !isScopeToken(sc):
			detail = fmt.Sprintf("%q is not an OAuth scope: a scope is printable ASCII without spaces, double quotes or backslashes. List each scope as its own element, for example [\"repo:read\", \"user\"].", sc)
		case seen[sc]:
			detail = fmt.Sprintf("%q is listed twice in scopes; remove one.", sc)
		}
		seen[sc] = true
		if detail != "" {
			*diags = append(*diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid OAuth scope",
				Detail:   detail,
				Subject:  elemRange(a.Expr, i).Ptr(),
			})
			ok = false
		}
	}
	if !ok || len(scopes) == 0 {
		return nil, ok
	}
	return scopes, true
}
