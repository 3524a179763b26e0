// Command confirm is a small MCP server written with the official Go SDK
// that asks its client for input in the middle of a call: its tool
// delete_all needs the user's confirmation (elicitation). To a 2026-07-28
// client it answers the call with an input_required result (inputRequests,
// multi round-trip) and reads the answer from the client's retry; to a
// legacy client the SDK sends elicitation/create as a request of its own
// and calls the tool again. It is what mcpform's tests run to show that
// both ways reach a client of either era through `mcpform run`.
package main
