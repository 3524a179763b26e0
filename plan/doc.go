// Package plan computes: it probes the servers of a configuration, diffs the
// configuration and each live surface against mcp.lock, and grades every
// change. A Plan is plain data; plan/render prints it and apply writes it.
// Nothing in plan prints.
package plan
