// Package taint is the session store behind mcpform run's taint gate
// (policy.taint in mcp.lock: docs/LOCKFILE.md, "Policy"; what it guarantees:
// docs/GUARANTEES.md, section 5).
//
// A session is one client process: the client starts one `mcpform run` per
// server, and every one of them shares the session, so a web page returned
// by server A's fetch can make server B's send_email need approval. The
// state lives in one file per session under the user's state directory
// ($XDG_STATE_HOME/mcpform/taint/ or ~/.local/state/mcpform/taint/, 0700;
// files 0600). It survives a run restart within the same client process,
// and it is never shared across client processes (the session name holds
// the parent's pid and start time) or users (the name holds the uid, the
// directory must be the user's own and private).
//
// Writers take an exclusive flock on the directory's lock file and replace
// a session's file by atomic rename; readers need no lock, because they
// always see a whole file. The file also holds the session's HMAC key for
// the 2026-07-28 requestState (see Seal) and the nonces already redeemed,
// so a requestState is single use across every run of the session.
//
// Suggest turns a server's own tool annotations into a starting taint
// policy; it never applies one on its own.
package taint
