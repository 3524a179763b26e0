// Package runtime is mcpform run: the enforcing stdio proxy a client config
// launches. It serves only the locked surface, quarantines a server whose
// surface drifted, tracks taint across a client session, and writes the
// hash-chained audit log.
//
// runtime reads the lock (package lock) and speaks the protocol (package mcp);
// it never imports lang or HCL: everything it needs was evaluated into the
// lock. Its subpackages sandbox and egress confine the server.
package runtime
