//go:build !linux

package sandbox

import (
	"fmt"
	"os/exec"
	"runtime"

	"github.com/mcpform/mcpform/policy"
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

// NewCgroup makes no control group outside Linux.
func NewCgroup(policy.Limits) (*Cgroup, error) { return nil, nil }

// Remove does nothing outside Linux.
func (c *Cgroup) Remove() error { return nil }

// LimitsInForce says nothing outside Linux: no sandbox runs there.
func LimitsInForce(policy.Limits) []string { return nil }

// Features is empty outside Linux.
func Features() string { return "" }

// MaybeRunStage does nothing outside Linux: there are no stages.
func MaybeRunStage() {}
