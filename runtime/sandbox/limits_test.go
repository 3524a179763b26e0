//go:build linux

package sandbox_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/mcpform/mcpform/policy"
	"github.com/mcpform/mcpform/runtime/sandbox"
)

// testLimits are low enough to meet quickly, high enough for the test
// binary to start.
var testLimits = policy.Limits{Memory: 256 << 20, Processes: 48, Files: 128, FileSize: 4 << 20}

// regexpCore matches the line of a server whose core dumps are off.
var regexpCore = regexp.MustCompile(`(?m)^CORE 0 0$`)

// limitAttempts try to exceed testLimits, each by a factor of two or more.
// HT_TMP is a writable directory.
func limitAttempts() []attempt {
	self, _ := os.Executable()
	return []attempt{
		{"fork-past-processes", func() error {
			var kids []*exec.Cmd
			defer func() {
				for _, k := range kids {
					k.Process.Kill()
					k.Wait()
				}
			}()
			for i := 0; i < 2*testLimits.Processes; i++ {
				k := exec.Command("/bin/sleep", "30")
				if err := k.Start(); err != nil {
					return fmt.Errorf("process %d: %w", i+1, err)
				}
				kids = append(kids, k)
			}
			return nil
		}},
		{"allocate-past-memory", func() error {
			c := exec.Command(self)
			c.Env = []string{"SANDBOXTEST_MODE=alloc", "HT_BYTES=" + strconv.FormatInt(3*testLimits.Memory, 10)}
			out, err := c.CombinedOutput()
			if err != nil {
				return fmt.Errorf("%w (%d bytes of output)", err, len(out))
			}
			return nil
		}},
		{"write-past-file-size", func() error {
			signal.Ignore(syscall.SIGXFSZ)
			f, err := os.Create(filepath.Join(os.Getenv("HT_TMP"), "big"))
			if err != nil {
				return fmt.Errorf("(creating failed) %w", err)
			}
			defer f.Close()
			chunk := make([]byte, 1<<20)
			for written := int64(0); written < 2*testLimits.FileSize; written += int64(len(chunk)) {
				if _, err := f.Write(chunk); err != nil {
					return err
				}
			}
			return nil
		}},
		{"open-past-files", func() error {
			var fds []int
			defer func() {
				for _, fd := range fds {
					unix.Close(fd)
				}
			}()
			for i := 0; i < 2*testLimits.Files; i++ {
				fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
				if err != nil {
					return fmt.Errorf("file %d: %w", i+1, err)
				}
				fds = append(fds, fd)
			}
			return nil
		}},
	}
}

// limitsServer is the mode "limits": the limit attempts, then the core
// dump limit.
func limitsServer() int {
	for _, a := range limitAttempts() {
		if err := a.try(); err != nil {
			fmt.Printf("RESULT %s failed: %v\n", a.name, err)
		} else {
			fmt.Printf("RESULT %s ok\n", a.name)
		}
	}
	var core unix.Rlimit
	unix.Getrlimit(unix.RLIMIT_CORE, &core)
	fmt.Printf("CORE %d %d\n", core.Cur, core.Max)
	return 0
}

// alloc is the mode "alloc": it allocates and touches HT_BYTES bytes.
func alloc() int {
	n, _ := strconv.ParseInt(os.Getenv("HT_BYTES"), 10, 64)
	b := make([]byte, n)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	return int(b[len(b)/2]) - 1
}

// TestLimits runs the limit attempts without the sandbox (each must work:
// the control) and in it, with a cgroup where this machine gives one and
// with rlimits alone: each must fail, and no core dump may be written.
func TestLimits(t *testing.T) {
	t.Run("control", func(t *testing.T) {
		tmp := tempDir(t)
		out, err := selfCommand(t, "limits", "HT_TMP="+tmp).CombinedOutput()
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		for name, v := range parseResults(out) {
			if v != "ok" {
				t.Errorf("control: %s does not work without the sandbox (%s), so its refusal shows nothing", name, v)
			}
		}
	})
	run := func(t *testing.T, cg *sandbox.Cgroup) {
		tmp := tempDir(t)
		cmd := selfCommand(t, "limits", "HT_TMP="+tmp)
		must(t, sandbox.Command(cmd, sandbox.Spec{Tmp: tmp, Limits: testLimits, Cgroup: cg}))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		results := parseResults(out)
		if len(results) != len(limitAttempts()) {
			t.Fatalf("got %d results:\n%s", len(results), out)
		}
		for name, v := range results {
			if name == "fork-past-processes" && cg == nil && os.Geteuid() == 0 {
				// The kernel exempts the host's root from RLIMIT_NPROC:
				// only the cgroup bounds its processes.
				t.Logf("%-24s %s (root without a cgroup: not enforced, as -explain-sandbox says)", name, v)
				continue
			}
			if v == "ok" {
				t.Errorf("%s: the limit did not hold", name)
			} else {
				t.Logf("%-24s %s", name, v)
			}
		}
		if !regexpCore.Match(out) {
			t.Errorf("core dumps are not limited to 0:\n%s", out)
		}
	}
	t.Run("cgroup", func(t *testing.T) {
		requireSandbox(t)
		cg, err := sandbox.NewCgroup(testLimits)
		must(t, err)
		if cg == nil {
			t.Skip("kernel capability missing: no writable cgroup with the pids controller here; the rlimits subtest covers the limits")
		}
		defer func() {
			if err := cg.Remove(); err != nil {
				t.Error(err)
			}
			for _, d := range cg.Dirs {
				if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s is left behind", d)
				}
			}
		}()
		t.Logf("limits in force through %s", cg)
		run(t, cg)
	})
	t.Run("rlimits", func(t *testing.T) {
		requireSandbox(t)
		run(t, nil)
	})
}
