// Package egress is the audited HTTP CONNECT (and plain HTTP) proxy that is a
// sandboxed server's only way out: it allows exactly the listed host:port
// entries, resolves names itself, refuses internal addresses unless listed
// literally, and reports every connection for the audit log.
package egress
