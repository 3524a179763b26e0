//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// setSession starts the server in a session of its own, which is also a
// process group of its own (its pid is both ids): Close signals everything
// it started, and no descendant can move to a process group of mcpform's
// session, so endTree finds each one (reap_linux.go). A server has no
// controlling terminal then: it cannot open /dev/tty, the user's terminal,
// past the proxy.
func setSession(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid = true
	cmd.SysProcAttr.Setpgid = false // setsid made the group; setpgid would fail
}

// signalGroup signals the server's process group. Errors (the group is
// already gone) do not matter.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig)
}

// killGroup kills the process group pid.
func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }
