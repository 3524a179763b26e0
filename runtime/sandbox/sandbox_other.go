//go:build !linux

package sandbox

import (
	"fmt"
	"os/exec"
	"runtime"
)

// Supported reports that no sandbox is available: it needs Linux (Landlock,
// seccomp and namespaces). A server with a sandbox policy does not start
// here.
func Supported() error {
	return fmt.Errorf("sandbox: a server with a sandbox policy runs only on Linux, not on %s; remove policy.sandbox to run it unconfined", runtime.GOOS)
}

// Command fails: see Supported.
func Command(cmd *exec.Cmd, spec Spec) error {
	return Supported()
}

// MaybeRunStage does nothing outside Linux: there are no stages.
func MaybeRunStage() {}
