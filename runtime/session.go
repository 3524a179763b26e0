package runtime

import (
	"bytes"
	"fmt"
	"os"
	goruntime "runtime"
	"strconv"
)

// SessionID names the client session the current process belongs to: the
// client process that started it. A client starts one `mcpform run` per
// server, so every run of one client shares the session, and the taint
// state (package runtime/taint) can follow a value from one server's
// result to another server's call. The parent's start time is part of the
// name on Linux, so a reused process id does not join an old session, and
// so is the user's id, so two users' clients never share one (the taint
// store is per user as well; the name says so on its own, too).
func SessionID() string {
	ppid := os.Getppid()
	if goruntime.GOOS == "linux" {
		if start, ok := procStartTime(ppid); ok {
			return fmt.Sprintf("u%d-ppid-%d-%s", os.Getuid(), ppid, start)
		}
	}
	return fmt.Sprintf("u%d-ppid-%d", os.Getuid(), ppid)
}

// procStartTime returns field 22 of /proc/PID/stat (start time in clock
// ticks since boot). The command name (field 2) may hold spaces and
// parentheses, so fields are counted after its last ')'.
func procStartTime(pid int) (string, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", false
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return "", false
	}
	fields := bytes.Fields(data[i+1:])
	// fields[0] is field 3 (state); field 22 is fields[19].
	if len(fields) < 20 {
		return "", false
	}
	return string(fields[19]), true
}
