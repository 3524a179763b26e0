// Package e2e holds the end-to-end hostile-server suite: each mode is an
// attack by a server (internal/hostile) or by a client steered by one, run
// twice with the same client script, once straight against the server (the
// control, where the attack must work) and once through the real
// `mcpform run` binary, built by the test (where it must not).
// docs/GUARANTEES.md names the modes behind each guarantee.
package e2e
