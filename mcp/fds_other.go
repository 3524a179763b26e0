//go:build !unix

package mcp

// closeOnExecAbove2 does nothing where handles are not inherited by number.
func closeOnExecAbove2() {}
