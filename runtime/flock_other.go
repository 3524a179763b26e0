//go:build !unix

package runtime

import "os"

// lockFile is a no-op where flock is missing: appends from one process are
// still serialised by AuditLog's mutex.
func lockFile(*os.File) error { return nil }

func unlockFile(*os.File) error { return nil }
