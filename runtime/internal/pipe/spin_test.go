//go:build linux

package pipe

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strconv"
	"testing"
	"time"
)

// testPipe returns an os.Pipe closed when the test ends.
func TestMain(m *testing.M) {
	if os.Getenv("MCPFORM_PIPE_STREAM") == "1" {
		streamMain()
	}
	os.Exit(m.Run())
}

// streamMain is the writer of TestSpinDoesNotStarveThePoller, run as this
// test binary re-executed: a line on stdout every ~30 µs for 400 ms, and
// the time every 5 ms on descriptor 3.
func streamMain() {
	other := os.NewFile(3, "other")
	end := time.Now().Add(400 * time.Millisecond)
	var next time.Time
	for now := time.Now(); now.Before(end); now = time.Now() {
		os.Stdout.Write([]byte("x\n"))
		if !now.Before(next) {
			fmt.Fprintf(other, "%d\n", time.Now().UnixNano())
			next = now.Add(5 * time.Millisecond)
		}
		for t := time.Now(); time.Since(t) < 30*time.Microsecond; {
		}
	}
	os.Exit(0)
}

func testPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

// spinPipes returns the read ends of two raw pipes sharing a spinner with
// the given window, and their write ends.
func spinPipes(t *testing.T, window time.Duration) (a, b *rawPipe, wa, wb *os.File) {
	t.Helper()
	ra, wa := testPipe(t)
	rb, wb := testPipe(t)
	a, _ = Raw[io.Reader](ra).(*rawPipe)
	b, _ = Raw[io.Reader](rb).(*rawPipe)
	if a == nil || b == nil {
		t.Fatal("os.Pipe's read ends are not raw pipes")
	}
	if spinOver(window, a, b) == nil {
		t.Fatal("no spinner over two raw pipes")
	}
	return a, b, wa, wb
}

func fdOf(t *testing.T, p *rawPipe) int32 {
	var fd int32
	if err := p.rc.Control(func(f uintptr) { fd = int32(f) }); err != nil {
		t.Fatal(err)
	}
	return fd
}

// waitResult runs wait and returns its answer, failing the test if it
// spins on for ten seconds (its window is longer in the cases that must
// end early).
func waitResult(t *testing.T, s *spinner, own int32, st *spinState) bool {
	t.Helper()
	done := make(chan bool, 1)
	go func() { done <- s.wait(own, st) }()
	select {
	case r := <-done:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("wait spun on for ten seconds")
		return false
	}
}

func awake() *spinState { return &spinState{awake: time.Now()} }

// A spinning reader takes its own pipe's message, parks at once for
// another pipe's (its reader needs the scheduler to wake it), and parks
// when the window has passed with nothing to read; a close, a read
// deadline, or a reader busy for too long ends the spin at once.
func TestSpinnerWait(t *testing.T) {
	a, b, wa, wb := spinPipes(t, time.Minute)
	s, fa := a.spin, fdOf(t, a)
	go func() {
		time.Sleep(5 * time.Millisecond)
		wa.Write([]byte("x\n"))
	}()
	if !waitResult(t, s, fa, awake()) {
		t.Fatal("wait gave up although its own pipe got a message within the window")
	}
	wb.Write([]byte("y\n"))
	// Both pipes hold a message: a's own wins.
	if !waitResult(t, s, fa, awake()) {
		t.Fatal("wait parked although its own pipe had a message")
	}
	if _, err := a.Read(make([]byte, 8)); err != nil {
		t.Fatal(err)
	}
	if waitResult(t, s, fa, awake()) {
		t.Fatal("wait reported its own pipe ready; only the other one was")
	}
	if _, err := b.Read(make([]byte, 8)); err != nil {
		t.Fatal(err)
	}

	closed := awake()
	go func() {
		time.Sleep(5 * time.Millisecond)
		closed.closed.Store(true)
	}()
	if waitResult(t, s, fa, closed) {
		t.Fatal("wait reported an empty pipe ready after a close")
	}
	late := awake()
	late.setDeadline(time.Now().Add(5 * time.Millisecond))
	if waitResult(t, s, fa, late) {
		t.Fatal("wait reported an empty pipe ready past the read deadline")
	}
	busy := &spinState{awake: time.Now().Add(-2 * maxBusy)}
	before := s.spins.Load()
	if waitResult(t, s, fa, busy) || s.spins.Load() != before {
		t.Fatal("a reader that ran maxBusy without parking spun again")
	}

	short, _, _, _ := spinPipes(t, time.Millisecond)
	if waitResult(t, short.spin, fdOf(t, short), awake()) {
		t.Fatal("wait reported an empty pipe ready")
	}
}

// A read that finds its pipe empty spins (and gets a message that comes
// within the window without parking), then parks and still gets a message
// that comes late; a read deadline or a close ends a read mid-spin at once,
// not when the window ends.
func TestSpinningReads(t *testing.T) {
	a, _, wa, _ := spinPipes(t, time.Minute)
	a.spin.busy = time.Hour
	buf := make([]byte, 16)
	read := func() (string, error) {
		t.Helper()
		type result struct {
			s   string
			err error
		}
		done := make(chan result, 1)
		go func() {
			n, err := a.Read(buf)
			done <- result{string(buf[:n]), err}
		}()
		select {
		case r := <-done:
			return r.s, r.err
		case <-time.After(10 * time.Second):
			t.Fatal("Read did not return within ten seconds")
			return "", nil
		}
	}
	// The first read parks (a reader that never parked counts as busy),
	// and wakes when the message comes.
	go func() {
		time.Sleep(20 * time.Millisecond)
		wa.Write([]byte("first\n"))
	}()
	if got, err := read(); err != nil || got != "first\n" {
		t.Fatalf("Read = %q, %v; want the first message", got, err)
	}
	before := a.spin.spins.Load()
	go func() {
		time.Sleep(20 * time.Millisecond)
		wa.Write([]byte("spun\n"))
	}()
	if got, err := read(); err != nil || got != "spun\n" {
		t.Fatalf("Read = %q, %v; want the second message", got, err)
	}
	if a.spin.spins.Load() == before {
		t.Fatal("a read of an empty pipe right after a message did not spin")
	}

	go func() {
		time.Sleep(20 * time.Millisecond)
		a.SetReadDeadline(time.Now())
	}()
	if _, err := read(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read past its deadline = %v; want a deadline error", err)
	}
	a.SetReadDeadline(time.Time{})

	go func() {
		time.Sleep(20 * time.Millisecond)
		a.Close()
	}()
	if _, err := read(); err == nil {
		t.Fatal("Read of a closed pipe returned no error")
	}

	p, _, wp, _ := spinPipes(t, 200*time.Microsecond)
	go func() {
		time.Sleep(20 * time.Millisecond) // long after the window
		wp.Write([]byte("late\n"))
	}()
	if n, err := p.Read(buf); err != nil || string(buf[:n]) != "late\n" {
		t.Fatalf("Read = %q, %v; want the late message", buf[:n], err)
	}
}

// A run's two readers are raw pipes sharing one spinner with the run's
// window, wherever two CPUs are there to spin on.
func TestReadersSpin(t *testing.T) {
	const window = 100 * time.Microsecond
	rc, _ := testPipe(t)
	rs, _ := testPipe(t)
	client, server := Readers(window, rc, rs)
	c, ok1 := client.(*rawPipe)
	s, ok2 := server.(*rawPipe)
	if !ok1 || !ok2 {
		t.Fatal("the run's readers are not raw pipes")
	}
	_, limited := cgroupCPUs("/proc/self")
	if goruntime.NumCPU() < 2 || limited {
		if c.spin != nil || s.spin != nil {
			t.Error("a run spins with fewer than two CPUs to spin on")
		}
		return
	}
	if c.spin == nil || c.spin != s.spin || c.spin.window != window || len(c.spin.fds) != 2 {
		t.Errorf("the run's readers do not share one spinner over both pipes with the window")
	}
	if _, server := Readers(-1, rc, rs); server.(*rawPipe).spin != nil {
		t.Error("a negative window still spins")
	}
}

// The CPU quota is found the way the kernel shows it: the process's group
// in /proc/self/cgroup, the hierarchy's mount in /proc/self/mountinfo,
// and the smallest quota from the group up to the mount.
func TestCgroupCPUs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		name = filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	self := filepath.Join(dir, "proc")
	mount := func(fstype, root, point, superOpts string) string {
		return "31 23 0:28 " + root + " " + filepath.Join(dir, point) + " rw,relatime - " + fstype + " " + fstype + " " + superOpts + "\n"
	}
	cases := []struct {
		name, cgroup, mountinfo string
		files                   map[string]string
		want                    float64 // 0: no quota
	}{
		{"v2: the smallest quota on the way up", "0::/a/b\n",
			mount("cgroup2", "/", "v2", "rw"),
			map[string]string{"v2/cpu.max": "max 100000\n", "v2/a/cpu.max": "150000 100000\n", "v2/a/b/cpu.max": "max 100000\n"}, 1.5},
		{"v2: no quota", "0::/a\n",
			mount("cgroup2", "/", "v2", "rw"),
			map[string]string{"v2/a/cpu.max": "max 100000\n"}, 0},
		{"v2 in a container: the mount's root is the group", "0::/docker/c1\n",
			mount("cgroup2", "/docker/c1", "v2", "rw"),
			map[string]string{"v2/cpu.max": "50000 100000\n"}, 0.5},
		{"v1: the cpu controller's quota and period", "4:memory:/m\n3:cpu,cpuacct:/x/y\n0::/\n",
			mount("cgroup", "/", "cpu", "rw,cpu,cpuacct") + mount("cgroup", "/", "memory", "rw,memory"),
			map[string]string{"cpu/x/y/cpu.cfs_quota_us": "-1\n", "cpu/x/y/cpu.cfs_period_us": "100000\n", "cpu/x/cpu.cfs_quota_us": "100000\n", "cpu/x/cpu.cfs_period_us": "100000\n", "memory/m/cpu.cfs_quota_us": "1\n"}, 1},
		{"v1 without a quota, and a group outside the mount", "1:cpu:/z\n0::/elsewhere\n",
			mount("cgroup", "/", "cpu", "rw,cpu") + mount("cgroup2", "/other", "v2", "rw"),
			map[string]string{"cpu/z/cpu.cfs_quota_us": "-1\n", "cpu/z/cpu.cfs_period_us": "100000\n", "v2/cpu.max": "1000 100000\n"}, 0},
	}
	for _, c := range cases {
		os.RemoveAll(dir)
		write("proc/cgroup", c.cgroup)
		write("proc/mountinfo", c.mountinfo)
		for name, data := range c.files {
			write(name, data)
		}
		cpus, ok := cgroupCPUs(self)
		if ok != (c.want != 0) || cpus != c.want {
			t.Errorf("%s: cgroupCPUs = %v, %v; want %v", c.name, cpus, ok, c.want)
		}
	}
	if _, ok := cgroupCPUs(filepath.Join(dir, "missing")); ok {
		t.Error("cgroupCPUs found a quota without /proc")
	}
	for in, want := range map[string]float64{"200000 100000": 2, "50000 100000\n": 0.5, "max 100000": 0, "garbage": 0, "-1 100000": 0} {
		if got := parseCPUMax(in); got != want {
			t.Errorf("parseCPUMax(%q) = %v; want %v", in, got, want)
		}
	}
}

// While a reader keeps finding its next message within the window it never
// parks, and at GOMAXPROCS=1 (what mcpform run uses) nothing else that waits
// on the poller is looked at until it does: the server's stderr, a write
// waiting for room, the egress proxy's sockets. Without the cap, only the
// runtime's monitor looked, every 10 ms at best (another pipe's reader woke
// 4-7 ms late, median); with it, a busy reader parks every maxBusy (about
// 0.5 ms late). Wake-up delays depend on the machine's load, so what is
// held is the mechanism: a reader fed a message every ~30 µs, with a window
// long enough that it never parks for want of one, parks because it was
// busy, again and again.
func TestSpinDoesNotStarveThePoller(t *testing.T) {
	defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(1))
	ra, wa := testPipe(t)
	rc, wc := testPipe(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	writer := exec.Command(exe)
	writer.Env = append(os.Environ(), "MCPFORM_PIPE_STREAM=1")
	writer.Stdout, writer.ExtraFiles = wa, []*os.File{wc}
	if err := writer.Start(); err != nil {
		t.Fatal(err)
	}
	wa.Close()
	wc.Close()
	defer writer.Wait()

	delays := make(chan []time.Duration, 1)
	go func() {
		var d []time.Duration
		sc := bufio.NewScanner(rc)
		for sc.Scan() {
			ns, _ := strconv.ParseInt(sc.Text(), 10, 64)
			d = append(d, time.Since(time.Unix(0, ns)))
		}
		delays <- d
	}()
	a, _ := Raw[io.Reader](ra).(*rawPipe)
	s := spinOver(MaxSpin, a)
	if s == nil {
		t.Fatal("no spinning raw pipe")
	}
	buf := make([]byte, 4096)
	for {
		if _, err := a.Read(buf); err != nil {
			break
		}
	}
	if n := s.busyParks.Load(); n < 10 {
		t.Errorf("a reader fed for 400 ms parked %d times for being busy; want one park every %v or so", n, maxBusy)
	}
	if d := <-delays; len(d) > 0 {
		slices.Sort(d)
		t.Logf("%d busy parks; the other pipe's reader woke %v late (median of %d)", s.busyParks.Load(), d[len(d)/2], len(d))
	}
}
