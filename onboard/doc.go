// Package onboard meets users where their MCP servers already are: it reads
// the configuration files of MCP clients (Claude Desktop, Claude Code, VS
// Code, Cursor) and turns them into an mcp.hcl for `mcpform import`, and it
// builds the client entries that launch `mcpform run` for
// `mcpform client-config`, merging them into a client's file without
// touching anything else in it. Client files are read as JWCC, JSON with
// comments and trailing commas as VS Code and Cursor write mcp.json
// (github.com/tailscale/hujson, whose syntax tree packs back byte for
// byte), with a UTF-8 byte order mark and CRLF line endings kept as found.
//
// It is pure: it reads bytes and returns bytes and notes. The CLI
// (cmd/mcpform) finds and reads the files, prints the notes and writes.
// Environment values found in a client file never leave this package: the
// generated mcp.hcl holds only their names, as mcp.lock does (package lang
// evaluates what it produces, package lock stores the names). Nor do a
// remote server's credentials (a URL's user information, query parameters
// and headers that carry one): a Bearer token becomes auth { bearer_env },
// the name of the variable to read it from.
//
// onboard imports lang (to format the HCL it writes) and policy.
package onboard
