// Package proxymodel is a reference model of the rules `mcpform run`
// enforces (docs/GUARANTEES.md), written apart from package runtime so
// that the two can be compared: given what is locked, the taint policy, the
// session's taint state and what happened so far, it says for each client
// message whether it must be forwarded, answered from the lock, refused
// (and with which error class), refused by quarantine, or held for the
// user's approval; and for each server message whether it reaches the
// client, is dropped, or is answered by the proxy.
//
// It is pure and works on abstract messages (Msg, Act): the property tests
// in this package render them as JSON-RPC lines, drive the real runtime.Run
// with them, and compare every step with Model. docs/GUARANTEES.md lists
// the guarantees the comparison checks.
package proxymodel
