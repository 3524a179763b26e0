//go:build !unix

package mcp

import (
	"os/exec"
	"syscall"
)

// setSession does nothing where there are no POSIX sessions.
func setSession(cmd *exec.Cmd) {}

// signalGroup kills the server itself where there are no process groups.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

// killGroup does nothing where there are no process groups.
func killGroup(pid int) {}
