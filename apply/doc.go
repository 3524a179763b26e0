// Package apply turns a reviewed plan.Plan into a new mcp.lock and writes it
// through lock's atomic save. It is the only writer of mcp.lock.
package apply
