package mcp

import (
	"math"

	"golang.org/x/sys/unix"
)

// closeRangeOnExecAbove2 marks descriptors 3 and up close-on-exec with one
// close_range(2), and reports whether the kernel did (it needs Linux 5.11
// for CLOSE_RANGE_CLOEXEC; an older one, or a sandbox without the call,
// says EINVAL or ENOSYS and the caller walks the descriptors instead).
func closeRangeOnExecAbove2() bool {
	return unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC) == nil
}
