package runtime

import (
	"os"
	"path"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// spinner lets a run's readers wait a little while busy before they park
// on the poller.
//
// At one call in flight a proxy is woken twice per call, once by the
// client's request and once by the server's answer, and each wake-up of a
// process whose CPU went idle costs what the whole call costs directly
// (~20 µs on a 2-vCPU VM, where an idle vCPU halts and is woken by the
// hypervisor). A reader that finds its pipe empty right after a message
// therefore polls the run's pipes for up to window before it parks: the
// next message usually arrives within it and no wake-up is needed. A run
// that is idle parks after at most one window, so the spinning costs only
// while messages are flowing, and never more than window per message.
//
// While it spins the reader gives way to the run's other goroutines and
// other processes on its CPU, and it parks as soon as another of the run's
// pipes has something to read, so that the scheduler wakes that pipe's
// reader at once; a Close or a read deadline ends the spin at once, and a
// reader parks at least every maxBusy.
type spinner struct {
	window time.Duration
	busy   time.Duration // maxBusy
	fds    []pollFd

	// What shows that reads spin, and that busy readers park.
	spins, busyParks atomic.Int64
}

// pollFd is struct pollfd.
type pollFd struct {
	fd      int32
	events  int16
	revents int16
}

const pollIn = 0x1

// newSpinner returns a spinner over the pipes rs (the run's readers), or
// nil when spinning cannot help: window is 0, or the process may use less
// than two CPUs (its affinity, or its cgroup's CPU quota, which the server
// shares), where spinning takes the time the other side needs to answer.
func newSpinner(window time.Duration, rs ...any) *spinner {
	if window <= 0 || goruntime.NumCPU() < 2 {
		return nil
	}
	if quota, ok := cgroupCPUs("/proc/self"); ok && quota < 2 {
		return nil
	}
	return spinOver(window, rs...)
}

// cgroupCPUs returns the CPU quota, in CPUs, of the process's cgroup and
// its ancestors (the smallest on the way up), from cgroup v2's cpu.max or
// cgroup v1's cpu controller, found through procSelf's cgroup and
// mountinfo; ok is false when no quota is set or none can be read.
func cgroupCPUs(procSelf string) (cpus float64, ok bool) {
	groups, err := os.ReadFile(filepath.Join(procSelf, "cgroup"))
	if err != nil {
		return 0, false
	}
	mounts, err := os.ReadFile(filepath.Join(procSelf, "mountinfo"))
	if err != nil {
		return 0, false
	}
	var v1, v2 string // the process's cgroup in each hierarchy
	for _, line := range strings.Split(string(groups), "\n") {
		f := strings.SplitN(line, ":", 3)
		switch {
		case len(f) != 3:
		case f[0] == "0" && f[1] == "":
			v2 = f[2]
		case slices.Contains(strings.Split(f[1], ","), "cpu"):
			v1 = f[2]
		}
	}
	for _, line := range strings.Split(string(mounts), "\n") {
		pre, post, found := strings.Cut(line, " - ")
		m, fs := strings.Fields(pre), strings.Fields(post)
		if !found || len(m) < 5 || len(fs) < 3 {
			continue
		}
		root, point := m[3], m[4]
		var c float64
		var limited bool
		switch {
		case fs[0] == "cgroup2" && v2 != "":
			c, limited = walkQuota(point, root, v2, func(dir string) (float64, bool) {
				b, err := os.ReadFile(filepath.Join(dir, "cpu.max"))
				return parseCPUMax(string(b)), err == nil
			})
		case fs[0] == "cgroup" && v1 != "" && slices.Contains(strings.Split(fs[2], ","), "cpu"):
			c, limited = walkQuota(point, root, v1, func(dir string) (float64, bool) {
				q, err1 := os.ReadFile(filepath.Join(dir, "cpu.cfs_quota_us"))
				p, err2 := os.ReadFile(filepath.Join(dir, "cpu.cfs_period_us"))
				return parseCPUMax(strings.TrimSpace(string(q)) + " " + string(p)), err1 == nil && err2 == nil
			})
		}
		if limited && (!ok || c < cpus) {
			cpus, ok = c, true
		}
	}
	return cpus, ok
}

// walkQuota reads quota in the directory of cgroup group under a mount of
// its hierarchy at point (whose root is root), and in each ancestor up to
// the mount point, and returns the smallest limit.
func walkQuota(point, root, group string, quota func(dir string) (float64, bool)) (cpus float64, ok bool) {
	root, group = path.Clean(root), path.Clean("/"+group)
	var rel string
	switch {
	case root == "/":
		rel = group
	case group == root:
		rel = "/"
	case strings.HasPrefix(group, root+"/"):
		rel = group[len(root):]
	default:
		return 0, false // the group is not under this mount
	}
	for ; ; rel = path.Dir(rel) {
		if c, read := quota(filepath.Join(point, rel)); read && c > 0 && (!ok || c < cpus) {
			cpus, ok = c, true
		}
		if rel == "/" {
			return cpus, ok
		}
	}
}

// parseCPUMax reads "QUOTA PERIOD" (cgroup v2's cpu.max, or v1's quota
// and period) as CPUs; 0 when there is no limit (QUOTA "max", or -1).
func parseCPUMax(s string) float64 {
	f := strings.Fields(s)
	if len(f) != 2 {
		return 0
	}
	quota, err1 := strconv.ParseFloat(f[0], 64)
	period, err2 := strconv.ParseFloat(f[1], 64)
	if err1 != nil || err2 != nil || quota <= 0 || period <= 0 {
		return 0
	}
	return quota / period
}

// spinOver is newSpinner whatever the CPUs.
func spinOver(window time.Duration, rs ...any) *spinner {
	s := &spinner{window: window, busy: maxBusy}
	var pipes []*rawPipe
	for _, r := range rs {
		p, ok := r.(*rawPipe)
		if !ok {
			continue
		}
		if p.rc.Control(func(fd uintptr) {
			s.fds = append(s.fds, pollFd{fd: int32(fd), events: pollIn})
		}) == nil {
			pipes = append(pipes, p)
		}
	}
	if len(pipes) == 0 {
		return nil
	}
	for _, p := range pipes {
		p.spin = s
	}
	return s
}

// wait spins until own has something to read (true), or another of the
// run's pipes has, or the window or st's deadline has passed, or st was
// closed, or st's reader has run for maxBusy without parking (false: park,
// and let the scheduler wake whoever has something to read).
func (s *spinner) wait(own int32, st *spinState) bool {
	start := time.Now()
	if start.Sub(st.awake) > s.busy {
		s.busyParks.Add(1)
		return false
	}
	s.spins.Add(1)
	until := start.Add(s.window)
	var buf [4]pollFd
	fds := buf[:0]
	var zero syscall.Timespec
	for i := 0; ; i++ {
		goruntime.Gosched()
		if i%4 == 3 {
			syscall.RawSyscall(syscall.SYS_SCHED_YIELD, 0, 0, 0)
		}
		if st.closed.Load() {
			return false
		}
		fds = append(fds[:0], s.fds...)
		n, _, errno := syscall.RawSyscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), uintptr(len(fds)), uintptr(unsafe.Pointer(&zero)), 0, 0, 0)
		if errno == 0 && n > 0 {
			return slices.ContainsFunc(fds, func(f pollFd) bool { return f.fd == own && f.revents != 0 })
		}
		now := time.Now()
		if d := st.deadline.Load(); !now.Before(until) || d != 0 && now.UnixNano() >= d {
			return false
		}
	}
}
