// Package oauth is mcpform as the OAuth 2.1 client of remote MCP servers
// (the MCP authorization spec): `mcpform login` runs the authorization
// code flow with PKCE and a loopback redirect, the token store keeps what
// it got outside the repository, and the stored-token handler gives plan,
// verify and run their access tokens, refreshed as they expire, without
// ever starting a login of its own.
//
// The flow itself (protected resource metadata, authorization server
// metadata, client ID metadata documents, dynamic or pre-registered
// clients, the resource parameter, scope selection and step-up) is the Go
// SDK's auth package; this package adds the loopback redirect, the store,
// and what the lock pins of a server's authorization: its protected
// resource and the authorization servers it names (Discover).
//
// Every request this package makes goes through mcp.HTTPClient: no
// address more private than the server's own, no redirect to another
// origin, TLS verified.
package oauth
