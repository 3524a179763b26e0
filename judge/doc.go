// Package judge asks language models whether a changed description or
// instructions text still means what the locked one meant: the opt-in
// judges of mcp.hcl's mcpform block (judge "NAME" { … }).
//
// It owns the versioned prompt (prompt/v1.txt, embedded; its version is
// recorded with every verdict), the OpenAI-compatible chat-completions
// client (https, or plain http only to a loopback host; the API key read
// from the environment and sent as a Bearer token, never logged or put in
// an error), the strict parser of a judge's answer, each judge's token
// budget and timeout, and the jury's rule that turns the answers into one
// outcome (Aggregate). Both texts are untrusted data to it and to the
// model; a judge's reason is untrusted text, which plan/render escapes.
//
// plan calls a Jury for each changed text the deterministic rules leave
// (whitespace and cosmetic edits need no judge) and records the Judgement
// on the change. Nothing of it enters mcp.lock. Package judge prints
// nothing.
package judge
