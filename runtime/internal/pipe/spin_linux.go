package pipe

import (
	goruntime "runtime"
	"slices"
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
	fds := append(buf[:0], s.fds...) // ppoll sets every revents each time
	var zero syscall.Timespec
	for i := 0; ; i++ {
		goruntime.Gosched()
		if i%4 == 3 {
			syscall.RawSyscall(syscall.SYS_SCHED_YIELD, 0, 0, 0)
		}
		if st.closed.Load() {
			return false
		}
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
