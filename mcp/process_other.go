//go:build !unix

package mcp

import (
	"os/exec"
	"syscall"
)

// setProcessGroup does nothing where there are no POSIX process groups.
func setProcessGroup(cmd *exec.Cmd) {}

// signalGroup kills the server itself where there are no process groups.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
