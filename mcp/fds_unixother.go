//go:build unix && !linux

package mcp

// closeRangeOnExecAbove2 reports false: close_range(2) with
// CLOSE_RANGE_CLOEXEC is Linux's, so the caller walks the descriptors.
func closeRangeOnExecAbove2() bool { return false }
