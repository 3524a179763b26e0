// Package mcp is the Model Context Protocol as mcpform speaks it:
// newline-delimited JSON-RPC 2.0 over stdio, in both protocol eras (the legacy
// initialize handshake and the 2026-07-28 server/discover era). It starts
// servers, detects their era, lists their surface for plan and verify, and
// provides the strict message helpers the runtime proxy uses.
//
// mcp holds no policy and imports none of mcpform's packages: what to allow
// is decided by plan (against the lock) and runtime (enforcing it).
package mcp
