package onboard

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/lang"
)

// A client's remote entry ("type": "http" or "sse", or a bare "url") becomes
// a url server. mcp.hcl and mcp.lock are meant to be committed, so no
// credential is carried over: not the URL's user information, not a query
// parameter that looks like one, not a header that carries one. An
// Authorization Bearer header becomes auth { bearer_env = "NAME" }, the
// variable the token is read from. What lang would refuse (package lang's
// checkURL and headers, mirrored here) is left out with a note that says
// why, so that what import writes always validates.

// remoteKind says what kind of entry s is: "http" (Streamable HTTP, or a
// url the client tries it on first), "sse" (the deprecated HTTP+SSE
// transport), or "" for a stdio entry. skip says why an entry that is
// neither cannot be imported.
func remoteKind(s *clientServer) (kind string, skip *skipReason) {
	switch typ := strings.ToLower(s.typ); {
	case typ == "http" || typ == "streamable-http" || typ == "streamablehttp" || typ == "streamable_http":
		return "http", nil
	case typ == "sse":
		return "sse", nil
	case typ == "ws" || typ == "websocket":
		return "", &skipReason{
			short: fmt.Sprintf("a WebSocket (%s) server: mcpform speaks Streamable HTTP and HTTP+SSE only", s.typ),
			long:  fmt.Sprintf("it is a remote WebSocket (%s) server, and mcpform speaks Streamable HTTP and HTTP+SSE only: if the server also serves Streamable HTTP, add it by hand as server { url = \"https://…\" }", strconv.Quote(s.typ)),
		}
	case typ != "" && typ != "stdio":
		return "", &skipReason{
			short: fmt.Sprintf("type %s, which mcpform does not know", strconv.Quote(s.typ)),
			long:  fmt.Sprintf("it has type %s, which mcpform does not know (stdio, http and sse are)", strconv.Quote(s.typ)),
		}
	case s.url != "" && s.command == "":
		return "http", nil
	}
	return "", nil
}

// skipReason is why an entry is not imported: short for the comment at the
// end of mcp.hcl, long for the warning, which says what to do.
type skipReason struct{ short, long string }

// remoteServer is a remote entry as mcp.hcl will have it.
type remoteServer struct {
	url       string   // without credentials or fragment; lang accepts it
	headers   []header // the fixed headers kept, in file order
	bearerEnv string   // auth { bearer_env }, or ""
	notes     []remoteNote
}

type header struct{ name, value string }

// remoteNote is a note for stderr and, when comment is set, a comment in the
// server block.
type remoteNote struct {
	warn          bool
	text, comment string
}

// loopbackHosts is how lang's error names the hosts http is allowed to.
const loopbackHosts = "localhost, 127.0.0.0/8 and [::1]"

// convertRemote converts the remote entry s, to be named name in mcp.hcl,
// or says why it cannot be.
func convertRemote(s *clientServer, kind, name string) (*remoteServer, *skipReason) {
	r := &remoteServer{}
	add := func(warn bool, comment, format string, a ...any) {
		r.notes = append(r.notes, remoteNote{warn: warn, text: fmt.Sprintf(format, a...), comment: comment})
	}
	if strings.TrimSpace(s.url) == "" {
		return nil, &skipReason{
			short: fmt.Sprintf("a remote %s server without a url", kind),
			long:  fmt.Sprintf("it is a remote %s server without a url: add it by hand as server { url = \"https://…\" }", kind),
		}
	}
	// The url is never printed as written: it may hold a credential. A
	// client variable is named, which is not one.
	u, err := url.Parse(s.url)
	if err != nil {
		if m := clientVar.FindString(s.url); m != "" {
			return nil, clientVarSkip(m)
		}
		return nil, &skipReason{
			short: "a url that is not a URL",
			long:  `its url is not a URL: add it by hand as server { url = "https://…" }, the server's endpoint`,
		}
	}

	// Credentials: the user information and query parameters that look
	// like one are left out (the rest of the url is kept as written).
	token := envToken(name)
	var dropped []string // where credentials were, for the note
	count := 0           // how many
	if u.User != nil {
		what := "the url's user name"
		if _, ok := u.User.Password(); ok {
			what = "the url's user name and password"
			count++
		}
		dropped = append(dropped, what)
		count++
		u.User = nil
	}
	if u.RawQuery != "" {
		var kept, params []string
		for _, p := range strings.Split(u.RawQuery, "&") {
			k, v, _ := strings.Cut(p, "=")
			key, err := url.QueryUnescape(k)
			if err != nil {
				key = k
			}
			val, err := url.QueryUnescape(v)
			if err != nil {
				val = v
			}
			if credentialParam(key) || secretValue.MatchString(val) || tokenLike(key) {
				params = append(params, label(key))
				continue
			}
			kept = append(kept, p)
		}
		if len(params) > 0 {
			what := "the url's query parameter "
			if len(params) > 1 {
				what = "the url's query parameters "
			}
			dropped = append(dropped, what+andList(params))
			count += len(params)
		}
		u.RawQuery = strings.Join(kept, "&")
	}
	u.ForceQuery = u.ForceQuery && u.RawQuery != ""
	if u.Fragment != "" || u.RawFragment != "" || strings.HasSuffix(s.url, "#") {
		u.Fragment, u.RawFragment = "", ""
		add(false, "", "the url's fragment (#…) is never sent to the server and was left out")
	}

	// What lang's checkURL refuses.
	host := strings.ToLower(u.Hostname())
	switch {
	case u.Scheme == "":
		return nil, &skipReason{
			short: "a url that is not absolute",
			long:  `its url is not an absolute URL: add it by hand as server { url = "https://…" }, the server's full endpoint`,
		}
	case u.Scheme == "ws" || u.Scheme == "wss":
		return nil, &skipReason{
			short: fmt.Sprintf("a WebSocket (%s://) url: mcpform speaks Streamable HTTP and HTTP+SSE only", u.Scheme),
			long:  fmt.Sprintf("its url is a WebSocket (%s://) url, and mcpform speaks Streamable HTTP and HTTP+SSE only: if the server also serves Streamable HTTP, add it by hand as server { url = \"https://…\" }", u.Scheme),
		}
	case u.Scheme != "https" && u.Scheme != "http":
		return nil, &skipReason{
			short: fmt.Sprintf("a %s:// url: mcpform connects over https", u.Scheme),
			long:  fmt.Sprintf("its url's scheme is %s, and mcpform connects to a remote server over Streamable HTTP, to an https:// url (or http:// to %s): add it by hand with the server's https endpoint", strconv.Quote(u.Scheme), loopbackHosts),
		}
	case u.Opaque != "" || host == "":
		return nil, &skipReason{
			short: "a url without a host",
			long:  `its url has no host: add it by hand as server { url = "https://…" }, the server's full endpoint`,
		}
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, &skipReason{
				short: "a url whose port is out of range",
				long:  fmt.Sprintf("its url's port %s is not from 1 to 65535: add it by hand with the server's real port", port),
			}
		}
	}
	if u.Scheme == "http" && !lang.IsLoopback(host) {
		https := *u
		https.Scheme = "https"
		long := fmt.Sprintf("its url is http:// to %s, which is not a loopback host: over http the requests, and any token, cross the network in the clear, so mcp.hcl takes http only for %s. If the server serves https, add it by hand as url = %s", strconv.Quote(u.Host), loopbackHosts, strconv.Quote(shownURL(&https)))
		if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
			local := *u
			local.Host = "127.0.0.1"
			if p := u.Port(); p != "" {
				local.Host += ":" + p
			}
			long = fmt.Sprintf("its url is http:// to %s, the address a server listens on, not one mcp.hcl connects to: mcp.hcl takes http only for %s. If the server runs on this machine, add it by hand as url = %s", strconv.Quote(u.Host), loopbackHosts, strconv.Quote(shownURL(&local)))
		}
		return nil, &skipReason{short: fmt.Sprintf("http:// to %s, which is not a loopback host", strconv.Quote(u.Host)), long: long}
	}
	r.url = u.String()
	// A client variable left in the url (the client expands it; mcpform
	// would send it as written) cannot be imported as it is.
	if m := clientVar.FindString(r.url); m != "" {
		return nil, clientVarSkip(m)
	}
	if m := clientVar.FindString(s.url); m != "" {
		if unescaped, err := url.PathUnescape(r.url); err == nil && clientVar.MatchString(unescaped) {
			return nil, clientVarSkip(m)
		}
	}
	if seg := pathSecret(u); seg > 0 {
		add(true, fmt.Sprintf("WARNING: segment %d of the url's path looks like a credential: do not commit it.", seg),
			"segment %d of the url's path looks like a credential and mcp.hcl is meant to be committed: if the server can take it as a bearer token instead, export it as %s and use auth { bearer_env = %s } with the url without it", seg, token, strconv.Quote(token))
	}

	// Headers: the credentials go, Authorization: Bearer becomes
	// bearer_env; the others are kept if lang takes them.
	var credHeaders []string
	seen := map[string]string{}
	for _, h := range s.headers {
		var v string
		if json.Unmarshal(h.Value, &v) != nil {
			add(true, "", "header %s is not a string and was left out", strconv.Quote(h.Key))
			continue
		}
		lower := strings.ToLower(h.Key)
		switch {
		case strings.EqualFold(h.Key, "Authorization") && r.bearerEnv == "" && seen[lower] == "":
			seen[lower] = h.Key
			r.bearerEnv = authorization(v, token, add)
		case lang.IsCredentialHeader(h.Key) || lang.LooksLikeCredential(v) || tokenLike(h.Key):
			seen[lower] = h.Key
			credHeaders = append(credHeaders, label(h.Key))
		case !lang.IsHeaderName(h.Key):
			add(true, "", "header %s is not an HTTP header name (letters, digits and !#$%%&'*+-.^_`|~, no spaces or colon) and was left out", strconv.Quote(h.Key))
		case lang.IsReservedHeader(h.Key):
			add(false, "", "header %s was left out: mcpform sets it itself on every request to a remote server", strconv.Quote(h.Key))
		case seen[lower] != "":
			add(true, "", "headers %s and %s are the same header (names are case-insensitive): the second was left out", strconv.Quote(seen[lower]), strconv.Quote(h.Key))
		case strings.IndexFunc(v, func(r rune) bool { return (r < 0x20 && r != '\t') || r == 0x7f }) >= 0:
			add(true, "", "the value of header %s holds a control character (a line break, NUL, …), which no header value can hold, and was left out", strconv.Quote(h.Key))
		default:
			seen[lower] = h.Key
			if m := clientVar.FindString(v); m != "" {
				add(true, "", "header %s takes its value from the client variable %s, which mcpform does not expand, and was left out: write its value in headers (never a credential)", strconv.Quote(h.Key), m)
				continue
			}
			r.headers = append(r.headers, header{h.Key, v})
		}
	}
	if len(credHeaders) > 0 {
		what := "the header "
		if len(credHeaders) > 1 {
			what = "the headers "
		}
		dropped = append(dropped, what+andList(credHeaders))
		count += len(credHeaders)
	}
	if len(dropped) > 0 {
		where, it := andList(dropped), "it was"
		if count > 1 {
			it = "they were"
		}
		if r.bearerEnv != "" {
			add(true, fmt.Sprintf("WARNING: the client sent a credential in %s, not copied; auth sends only the bearer token.", where),
				"the client config sent a credential in %s; mcp.hcl keeps no credentials: %s left out, and auth { bearer_env = %s } sends the Authorization token only", where, it, strconv.Quote(r.bearerEnv))
		} else {
			add(true, fmt.Sprintf("WARNING: the client sent a credential in %s, not copied: see auth { bearer_env }.", where),
				"the client config sent a credential in %s; mcp.hcl keeps no credentials: %s left out. mcpform sends a token as Authorization: Bearer: if the server takes one, export it as %s and add auth { bearer_env = %s }", where, it, token, strconv.Quote(token))
		}
	}
	if kind == "sse" || strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/sse") {
		what := "the client connects to it over SSE (HTTP+SSE, deprecated)"
		if kind != "sse" {
			what = "its url ends in /sse, an HTTP+SSE endpoint"
		}
		often := "often the same URL without /sse"
		if trimmed, ok := withoutSSE(u); ok {
			often += ", " + trimmed
		}
		add(false, "HTTP+SSE: plan finds it by the spec's fallback and the lock pins it; a Streamable HTTP endpoint, where the server has one ("+often+"), is the one to prefer.",
			"%s: mcpform reaches it so too (plan finds the transport by the spec's fallback, and the lock pins it); if the server also has a Streamable HTTP endpoint (%s), prefer that one", what, often)
	}
	return r, nil
}

// authorization reads an Authorization header's value and returns the
// bearer_env that replaces it: the variable the client read the token
// from, or token; "" when it is no Bearer token.
func authorization(v, token string, add func(warn bool, comment, format string, a ...any)) string {
	const none = "mcp.hcl keeps no credentials"
	ref := authRef.FindStringSubmatch(strings.TrimSpace(v))
	variable, input := "", ""
	if ref != nil {
		variable, input = ref[1]+ref[2], ref[3]
	}
	switch {
	case variable != "" && !lang.LooksLikeToken(variable):
		add(false, fmt.Sprintf("The client read the Authorization token from %s: set it in the environment.", variable),
			"the client config took the Authorization header's token from %s; %s: auth { bearer_env = %s } reads it from there when mcpform connects", variable, none, strconv.Quote(variable))
		return variable
	case ref != nil && variable == "":
		add(false, fmt.Sprintf("The Authorization token came from a VS Code input: set %s in the environment.", token),
			"the client config took the Authorization header's token from the VS Code input %s, which only VS Code can prompt for; %s: export it as %s and keep auth { bearer_env = %s }", strconv.Quote(input), none, token, strconv.Quote(token))
		return token
	case ref != nil || len(v) > len("bearer ") && strings.EqualFold(v[:len("bearer ")], "bearer "):
		add(false, fmt.Sprintf("The client sent a token in the Authorization header (not copied): set %s in the environment.", token),
			"the client config sent a token in the Authorization header; %s: export it as %s and keep auth { bearer_env = %s }", none, token, strconv.Quote(token))
		return token
	}
	add(true, "WARNING: the client sent a credential in the Authorization header that is not a Bearer token, not copied.",
		"the client config sent a credential in the Authorization header that is not a Bearer token; %s: it was left out. mcpform sends a token as Authorization: Bearer: if the server takes one, export it as %s and add auth { bearer_env = %s }", none, token, strconv.Quote(token))
	return ""
}

// authRef matches an Authorization value that names the variable holding
// the token: "Bearer ${env:NAME}" (VS Code, Cursor), "Bearer ${NAME}" or
// "${NAME:-default}" (Claude Code), "Bearer $NAME", or the reference alone
// (1 or 2: the variable); or a VS Code input, "Bearer ${input:ID}" (3: the
// ID).
var authRef = regexp.MustCompile(`^(?i:bearer\s+)?(?:\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}|\$([A-Za-z_][A-Za-z0-9_]*)|\$\{input:([^}]*)\})$`)

// envToken is the variable suggested for a server's token: its mcp.hcl
// name upper-cased, other characters as "_", then _TOKEN.
func envToken(name string) string {
	b := []byte(strings.ToUpper(name))
	for i, c := range b {
		if !('A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			b[i] = '_'
		}
	}
	s := string(b) + "_TOKEN"
	if s[0] >= '0' && s[0] <= '9' {
		s = "_" + s
	}
	return s
}

// clientVarSkip says why a url with a client variable is not imported.
func clientVarSkip(m string) *skipReason {
	return &skipReason{
		short: fmt.Sprintf("a url that uses the client variable %s", m),
		long:  fmt.Sprintf("its url uses the client variable %s, which mcpform does not expand: add it by hand with the value written out, as server { url = \"https://…\" }", m),
	}
}

// credentialParam reports whether a query parameter's name says it holds
// a credential: token, access_token, key, api_key, apikey, secret,
// password, auth, signature, credential.
func credentialParam(name string) bool {
	lower := strings.ToLower(name)
	for _, w := range []string{"token", "key", "secret", "passw", "auth", "credential", "signature"} {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// pathSecret is the number (from 1) of the first segment of u's path that
// looks like a credential, 0 for none: a token of a well-known service, or
// a long opaque string of letters and digits, as some servers put their
// key in their url.
func pathSecret(u *url.URL) int {
	for i, seg := range strings.Split(strings.TrimPrefix(u.Path, "/"), "/") {
		if secretValue.MatchString(seg) || opaque(seg) {
			return i + 1
		}
	}
	return 0
}

// opaque reports a string of 32 or more token characters that mixes
// letters and digits, as keys are and words, versions and names are not.
func opaque(s string) bool {
	if len(s) < 32 {
		return false
	}
	letters, digits := false, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
			letters = true
		case '0' <= c && c <= '9':
			digits = true
		case c == '-' || c == '_' || c == '=' || c == '+':
		default:
			return false
		}
	}
	return letters && digits
}

// tokenLike reports a name (of a query parameter, of a header) that is
// itself a token, which a message must not repeat.
func tokenLike(name string) bool { return secretValue.MatchString(name) || opaque(name) }

// label is a query parameter's or header's name for a message, quoted; a
// name that is itself a token is not repeated.
func label(name string) string {
	if tokenLike(name) {
		return "one named like a token"
	}
	return strconv.Quote(name)
}

// shownURL is u for a message: its segments that look like credentials
// are written "…" (u holds no user information or credential parameter by
// then).
func shownURL(u *url.URL) string {
	if pathSecret(u) == 0 {
		return u.String()
	}
	segs := strings.Split(u.EscapedPath(), "/")
	for i, seg := range segs {
		if p, err := url.PathUnescape(seg); err == nil && (secretValue.MatchString(p) || opaque(p)) {
			segs[i] = "…"
		}
	}
	s := u.Scheme + "://" + u.Host + strings.Join(segs, "/")
	if u.RawQuery != "" {
		s += "?" + u.RawQuery
	}
	return s
}

// withoutSSE is u without its last path segment "sse", quoted for a
// message.
func withoutSSE(u *url.URL) (string, bool) {
	path := strings.TrimSuffix(u.Path, "/")
	if !strings.HasSuffix(path, "/sse") {
		return "", false
	}
	v := *u
	v.Path, v.RawPath = strings.TrimSuffix(path, "sse"), ""
	return strconv.Quote(shownURL(&v)), true
}

// writeRemote writes the attributes and auth block of r, after the
// comments, inside its server block.
func writeRemote(b *strings.Builder, r *remoteServer) {
	fmt.Fprintf(b, "  url = %s\n", escape.HCLString(r.url))
	if len(r.headers) > 0 {
		b.WriteString("  headers = {\n")
		for _, h := range r.headers {
			fmt.Fprintf(b, "    %s = %s\n", escape.HCLString(h.name), escape.HCLString(h.value))
		}
		b.WriteString("  }\n")
	}
	if r.bearerEnv != "" {
		fmt.Fprintf(b, "  auth {\n    bearer_env = %s\n  }\n", escape.HCLString(r.bearerEnv))
	}
}

// andList joins "a", "a and b", "a, b and c".
func andList(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}
