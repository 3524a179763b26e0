//go:build !linux

package pins

import "os"

// StatKey is "" where mcpform does not read the ctime: every start (and
// every check of an npm tree) hashes.
func StatKey(os.FileInfo) string { return "" }
