package mcp

import (
	"bytes"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// A server's descendants end with it (docs/GUARANTEES.md, section 12),
// also those that left its process group or its session. Two things make
// that possible without a sandbox's pid namespace:
//
//   - Every server starts in a session of its own (setSession), so each of
//     its descendants is in that session unless it called setsid itself,
//     and none can join a process group of mcpform's session.
//   - mcpform is a child subreaper (PR_SET_CHILD_SUBREAPER): a descendant
//     whose parent exits is reparented to mcpform rather than to init, so
//     it can still be found, killed and reaped.
//
// When a server has exited, endTree kills every process of its session,
// and every child of mcpform's that was reparented to it and is in no
// running server's session and not in mcpform's own: a descendant that
// called setsid. In a process that runs several servers at once (plan's
// probes), such a descendant whose own parent exited while its server
// still runs cannot be told apart from another server's, and ends with
// whichever server ends first.

var reaper struct {
	once      sync.Once
	subreaper bool
	// starting is held (shared) from a server's start until it is in
	// live, and exclusively by endTree while it looks for what to kill: a
	// server just started is a child in a session of its own too.
	starting sync.RWMutex
	mu       sync.Mutex
	live     map[int]bool // the pids (and session ids) of running servers
}

// startServer runs start, which starts a server and returns its pid (0
// when it did not start), and records the server as running. The first
// call makes this process a child subreaper.
func startServer(start func() int) {
	reaper.once.Do(func() {
		_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
		reaper.subreaper = errno == 0
	})
	reaper.starting.RLock()
	defer reaper.starting.RUnlock()
	pid := start()
	if pid == 0 {
		return
	}
	reaper.mu.Lock()
	if reaper.live == nil {
		reaper.live = map[int]bool{}
	}
	reaper.live[pid] = true
	reaper.mu.Unlock()
}

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER from linux/prctl.h.
const prSetChildSubreaper = 36

// endTree kills and reaps what the server pid (exited and reaped) left
// behind, for at most grace.
func endTree(pid int, grace time.Duration) {
	reaper.mu.Lock()
	delete(reaper.live, pid)
	reaper.mu.Unlock()
	killGroup(pid)
	self, own := os.Getpid(), ownSession()
	deadline := time.Now().Add(grace)
	for wait := 100 * time.Microsecond; ; wait = min(2*wait, 20*time.Millisecond) {
		reaper.starting.Lock()
		reaper.mu.Lock()
		found := false
		forEachProcess(func(p, ppid, sid int) {
			switch {
			case sid == pid:
				// In the server's session: killed wherever it is; once
				// its parent is gone it is ours to reap below.
			case ppid == self && reaper.subreaper && sid != own && !reaper.live[sid] && !reaper.live[p]:
				// Reparented to mcpform and in no running server's
				// session: a descendant that left its server's.
			default:
				return
			}
			found = true
			syscall.Kill(p, syscall.SIGKILL)
			if ppid == self {
				var ws syscall.WaitStatus
				syscall.Wait4(p, &ws, syscall.WNOHANG, nil)
			}
		})
		reaper.mu.Unlock()
		reaper.starting.Unlock()
		if !found || time.Now().After(deadline) {
			return
		}
		time.Sleep(wait)
	}
}

func ownSession() int {
	sid, _, errno := syscall.RawSyscall(syscall.SYS_GETSID, 0, 0, 0)
	if errno != 0 {
		return -1
	}
	return int(sid)
}

// forEachProcess calls fn with every process's pid, parent and session,
// read from /proc/<pid>/stat.
func forEachProcess(fn func(pid, ppid, sid int)) {
	d, err := os.Open("/proc")
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp session …; comm may hold anything.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(stat[i+1:])
		if len(f) < 4 {
			continue
		}
		ppid, err1 := strconv.Atoi(string(f[1]))
		sid, err2 := strconv.Atoi(string(f[3]))
		if err1 == nil && err2 == nil {
			fn(pid, ppid, sid)
		}
	}
}
