// Package hostile is an MCP server that attacks its client: it answers the
// handshake and the lists of a configured surface, in either protocol era,
// and answers each call it receives with the next Action of its script
// (garbage, wrong ids, smuggled keys, a drifted list, a server→client
// request, an exit mid-call, an environment variable it was not given, a
// file it must not read, a host it must not reach, ...).
//
// Two kinds of test drive it: the property tests of internal/proxymodel run
// it in-process (Serve), thousands of times per run, and the end-to-end
// suite of internal/e2e runs it as a process (Main), both directly (the
// control: the attack works) and behind the real mcpform binary (the attack
// does not). It is the hostile twin of internal/fakemcp, which misbehaves
// only by method; this one misbehaves by call.
package hostile
