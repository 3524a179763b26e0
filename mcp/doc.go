// Package mcp is the Model Context Protocol as mcpform speaks it:
// newline-delimited JSON-RPC 2.0 over stdio, in both protocol eras (the legacy
// initialize handshake and the 2026-07-28 server/discover era). It starts
// servers, detects their era, lists their surface for plan and verify, and
// provides the strict message helpers the runtime proxy uses.
//
// mcp holds no policy and imports none of mcpform's packages (only the leaves
// internal/escape and internal/strictjson): what to allow is decided by plan
// (against the lock) and runtime (enforcing it). lock stores what Probe
// returns; it never calls mcp.
//
// The pieces, bottom up:
//
//   - Reader (framer.go): one message per line, capped (DefaultMaxLineSize);
//     an over-long line is refused, never truncated.
//   - DecodeMessage, AppendMessage (message.go): strict JSON-RPC 2.0 with
//     exact-case member names, no duplicate keys at any depth, no batches.
//   - envelope and the _meta helpers (meta.go): what every 2026-07-28 request
//     carries instead of a handshake.
//   - Start and Process (process.go): the server in its own process group,
//     only the named environment variables, a bounded stderr tail, and the
//     stdio transport's shutdown (close stdin, SIGTERM, SIGKILL the group).
//   - rpcConn (conn.go): requests with our own ids and timeouts, notifications
//     routed in stream order, server→client requests answered (denied by
//     default).
//   - Probe (probe.go): era detection (server/discover first, then the
//     legacy initialize, as Probe's doc says), then every declared list to
//     the end. Failures are a
//     *ProbeError naming the server, the stage and the stderr tail.
//
// Tests run the npm reference servers and a Go SDK server (real servers), and
// internal/fakemcp (the test binary re-executed) for what real servers cannot
// show.
package mcp
