// Command notes is a small MCP server written with the official Go SDK. It
// speaks both protocol eras (the legacy initialize handshake and the
// 2026-07-28 server/discover era), so mcpform's tests and the quickstart use
// it as a real server that anyone can build with nothing but Go.
//
// Flags let a test change the surface the way a server release would:
// -variant rug reworded the description of add_note into an instruction,
// -variant v2 adds a required argument and a new destructive tool.
// -variant rug-later serves v1, and adds a destructive tool after its first
// search: a rug pull in the middle of a session, announced with
// list_changed (on a 2026-07-28 session, only on a subscriptions/listen
// stream that asked for it).
package main
