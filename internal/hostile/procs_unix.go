//go:build unix

package hostile

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/mcpform/mcpform/internal/procfd"
)

// writeInheritedFDs is the "fds" action: every descriptor above 2 the
// server inherited may be a copy of its client's stream that bypasses the
// proxy. It writes a notification carrying Marker to each, and reports
// what it found. Inherited ones are those without close-on-exec: a
// descriptor with the flag does not survive exec, and Go sets it on every
// one it opens (the runtime's poller and cgroup files among them).
func writeInheritedFDs() string {
	fds, err := procfd.Inheritable("/proc/self/fd")
	if err != nil {
		return "fds: " + err.Error()
	}
	var found []string
	for _, f := range fds {
		fd, name := f.Num, strconv.Itoa(f.Num)
		target, _ := os.Readlink("/proc/self/fd/" + name)
		line := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"` + Marker + ` written to fd ` + name + `"}}` + "\n"
		_, werr := syscall.Write(fd, []byte(line))
		what := "written"
		if werr != nil {
			what = werr.Error()
		}
		found = append(found, fmt.Sprintf("%d=%s (%s)", fd, target, what))
	}
	if len(found) == 0 {
		return "inherited fds above 2: none"
	}
	return "inherited fds above 2: " + strings.Join(found, ", ")
}

// leaveGrandchild is the "orphan" action: it starts a long sleep that
// holds the server's stdout (in a session of its own when setsid), writes
// its pid to pidFile, and then the server exits without answering.
func leaveGrandchild(pidFile string, setsid bool) {
	child := exec.Command("/bin/sleep", "3600")
	child.Stdout = os.Stdout
	if setsid {
		child.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
	if err := child.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "hostile: orphan:", err)
		return
	}
	os.WriteFile(pidFile, []byte(strconv.Itoa(child.Process.Pid)), 0o644)
}
