package lang

import "strings"

// What mcp.hcl refuses in a url server's headers, for whoever writes one
// (mcpform import leaves such headers out rather than write a file
// validate would refuse).

// IsHeaderName reports whether s is an HTTP field name (an RFC 9110
// token).
func IsHeaderName(s string) bool { return isToken(s) }

// IsReservedHeader reports whether mcpform sets the header name itself on
// every request to a remote server.
func IsReservedHeader(name string) bool { return containsFold(reservedHeaders, name) }

// IsCredentialHeader reports whether a header of this name carries a
// credential whatever its value (Authorization, Cookie, a name with
// "token", "secret", "key", "password" or "auth" in it).
func IsCredentialHeader(name string) bool {
	return containsFold(credentialHeaders, name) || containsWord(strings.ToLower(name), credentialWords)
}

// LooksLikeCredential reports whether a header value is, by its look, a
// credential.
func LooksLikeCredential(v string) bool { return looksLikeCredential(v) }

// LooksLikeToken reports whether a would-be variable name is rather a
// token (as bearer_env refuses).
func LooksLikeToken(v string) bool { return looksLikeToken(v) }

// IsLoopback reports whether host (without brackets or port) is localhost
// or a loopback address, the one kind of host a url may use http for.
func IsLoopback(host string) bool { return isLoopback(host) }
