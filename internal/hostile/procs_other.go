//go:build !unix

package hostile

func writeInheritedFDs() string { return "fds: not on this system" }

func leaveGrandchild(pidFile string, setsid bool) {}
