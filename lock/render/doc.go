// Package render prints mcp.lock for people and for CI: `mcpform show`'s
// view of the locked entries, and `mcpform verify`'s report of how each
// live server differs from its entry, as text and as the versioned JSON
// form (format_version 1.1, documented in JSON.md beside this file).
//
// It is to the lock what plan/render is to a plan: the data comes in
// computed (lock.Entry, lock.Drift and the probe's verdicts, which
// cmd/mcpform gathers), and nothing here decides an exit code. It escapes
// every string a server sent with internal/escape.
package render
