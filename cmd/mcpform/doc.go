// Command mcpform is Terraform for MCP servers: the servers a team allows are
// declared in mcp.hcl (package lang), their reviewed surface is pinned in
// mcp.lock (package lock), plan and apply review and record drift (packages
// plan, plan/render, apply) and run is the enforcing proxy that client
// configs launch (package runtime).
//
// This package is thin: each subcommand parses its flags into a plain struct,
// wires the packages together and renders. It holds no policy of its own.
package main
