// Package render prints `mcpform taint list` and `mcpform taint reset`:
// the client sessions that read from a taint source, as text for the
// person who reviews them and as JSON (format_version "1"), and what a
// reset cleared.
//
// The sessions come from runtime/taint's store; the key and the redeemed
// nonces that the store keeps beside them are never printed. What a server
// named (its name as the lock has it, the source and item labels) is
// escaped with internal/escape.
package render
