//go:build !linux

package pins

import "os"

// statKey is "" where mcpform does not read the ctime: every start hashes.
func statKey(os.FileInfo) string { return "" }
