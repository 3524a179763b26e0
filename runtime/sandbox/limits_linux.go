//go:build linux

package sandbox

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mcpform/mcpform/internal/mutation"
	"github.com/mcpform/mcpform/policy"
)

// Resource limits. Two mechanisms, the stronger where the kernel gives it:
//
//   - a control group made for the server, when mcpform may create one:
//     cgroup v2 where its own cgroup delegates the pids and memory
//     controllers, or the v1 pids and memory hierarchies where they are
//     writable (the host's root). It bounds the server's whole tree:
//     processes and threads together (pids.max), memory together
//     (memory.max, or memory.limit_in_bytes and memsw).
//   - rlimits, always: RLIMIT_NOFILE (files), RLIMIT_FSIZE (file size),
//     RLIMIT_CORE 0 (no core dumps), RLIMIT_NPROC (processes: counted per
//     user in the sandbox's user namespace, and ignored by the kernel for
//     the host's root, which is why root needs the cgroup), and
//     RLIMIT_DATA (memory, per process) when no memory cgroup is in force.

// cgroupParent is where a server's group can be made for one controller.
type cgroupParent struct {
	version    int
	controller string
	dir        string // this process's own group in that hierarchy
}

// cgroupParents finds, for pids and memory, the group of this process under
// which it may make a child group with that controller: cgroup v2 first,
// then v1. An empty result means rlimits only.
func cgroupParents() []cgroupParent {
	if mutation.Off("limits") {
		return nil
	}
	mounts := cgroupMounts()
	own := ownCgroups()
	if m, ok := mounts["2"]; ok {
		dir := filepath.Join(m, own["2"])
		b, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
		ctrl := strings.Fields(string(b))
		if err == nil && slices.Contains(ctrl, "pids") && unix.Access(dir, unix.W_OK) == nil {
			out := []cgroupParent{{2, "pids", dir}}
			if slices.Contains(ctrl, "memory") {
				out = append(out, cgroupParent{2, "memory", dir})
			}
			return out
		}
	}
	var out []cgroupParent
	for _, c := range []string{"pids", "memory"} {
		m, ok := mounts[c]
		if !ok {
			continue
		}
		dir := filepath.Join(m, own[c])
		if unix.Access(dir, unix.W_OK) == nil {
			out = append(out, cgroupParent{1, c, dir})
		}
	}
	return out
}

// cgroupMounts maps "2" to the cgroup2 mount point and each v1 controller
// to the mount point of its hierarchy, from /proc/self/mountinfo.
func cgroupMounts() map[string]string {
	out := map[string]string{}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS ... - FSTYPE SOURCE SUPEROPTS
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if !ok || len(fields) < 5 || len(tail) < 3 || fields[3] != "/" {
			continue
		}
		switch tail[0] {
		case "cgroup2":
			out["2"] = fields[4]
		case "cgroup":
			for _, o := range strings.Split(tail[2], ",") {
				if o == "pids" || o == "memory" {
					out[o] = fields[4]
				}
			}
		}
	}
	return out
}

// ownCgroups maps "2" and each v1 controller to this process's group path,
// from /proc/self/cgroup.
func ownCgroups() map[string]string {
	out := map[string]string{}
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			out["2"] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out
}

// LimitsInForce says, for -explain-sandbox, how each limit of l would be
// enforced on this machine.
func LimitsInForce(l policy.Limits) []string {
	parents := cgroupParents()
	by := map[string]string{}
	for _, p := range parents {
		by[p.controller] = fmt.Sprintf("cgroup v%d", p.version)
	}
	procs := "RLIMIT_NPROC"
	if c, ok := by["pids"]; ok {
		procs = c + " pids.max, and RLIMIT_NPROC"
	} else if os.Geteuid() == 0 {
		procs = "not enforced: the kernel exempts the host's root from RLIMIT_NPROC, and no cgroup with the pids controller is writable here"
	}
	mem := "RLIMIT_DATA: each process's private memory; shared mappings and memfds are not counted without a memory cgroup"
	if c, ok := by["memory"]; ok {
		mem = c + " memory limit, for the whole tree"
	}
	return []string{
		fmt.Sprintf("memory     %s (%s)", policy.FormatSize(l.Memory), mem),
		fmt.Sprintf("processes  %d (%s)", l.Processes, procs),
		fmt.Sprintf("files      %d open per process (RLIMIT_NOFILE)", l.Files),
		fmt.Sprintf("file size  %s (RLIMIT_FSIZE)", policy.FormatSize(l.FileSize)),
		fmt.Sprintf("${TMP}     %s at most (a tmpfs of its own)", policy.FormatSize(l.Memory)),
		"core dumps none (RLIMIT_CORE 0)",
	}
}

// NewCgroup makes a control group for one server with l's processes and
// memory limits, or returns nil (and no error) when mcpform may not make
// one here: the rlimits are then all there is. Stale groups of earlier
// runs killed before they could remove theirs are removed first (an empty
// group only: rmdir fails on one in use).
func NewCgroup(l policy.Limits) (*Cgroup, error) {
	parents := cgroupParents()
	if len(parents) == 0 {
		return nil, nil
	}
	var buf [6]byte
	rand.Read(buf[:])
	name := "mcpform-" + hex.EncodeToString(buf[:])
	cg := &Cgroup{Version: parents[0].version}
	made := map[string]bool{}
	for _, p := range parents {
		dir := filepath.Join(p.dir, name)
		if !made[dir] {
			removeStale(p.dir)
			if err := os.Mkdir(dir, 0o755); err != nil {
				cg.Remove()
				return nil, fmt.Errorf("making the server's cgroup: %w", err)
			}
			made[dir] = true
			cg.Dirs = append(cg.Dirs, dir)
		}
		var err error
		switch {
		case p.controller == "pids":
			err = writeCgroup(dir, "pids.max", strconv.Itoa(l.Processes))
		case p.version == 2:
			err = writeCgroup(dir, "memory.max", strconv.FormatInt(l.Memory, 10))
			if err == nil {
				writeCgroup(dir, "memory.swap.max", "0") // absent without swap accounting
			}
		default:
			err = writeCgroup(dir, "memory.limit_in_bytes", strconv.FormatInt(l.Memory, 10))
			if err == nil {
				writeCgroup(dir, "memory.memsw.limit_in_bytes", strconv.FormatInt(l.Memory, 10))
			}
		}
		if err != nil {
			cg.Remove()
			return nil, err
		}
		cg.Controllers = append(cg.Controllers, p.controller)
	}
	return cg, nil
}

func writeCgroup(dir, file, value string) error {
	if err := os.WriteFile(filepath.Join(dir, file), []byte(value), 0); err != nil {
		return fmt.Errorf("setting the server's cgroup limit %s: %w", file, err)
	}
	return nil
}

// removeStale removes the empty mcpform-* groups in dir.
func removeStale(dir string) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), "mcpform-") {
			unix.Rmdir(filepath.Join(dir, e.Name()))
		}
	}
}

// Remove kills whatever is left in the group and deletes it.
func (c *Cgroup) Remove() error {
	if c == nil {
		return nil
	}
	var errs []error
	for _, dir := range c.Dirs {
		var err error
		for try := 0; try < 50; try++ {
			if err = unix.Rmdir(dir); err == nil || errors.Is(err, unix.ENOENT) {
				err = nil
				break
			}
			killCgroup(dir)
			time.Sleep(10 * time.Millisecond)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("removing the server's cgroup %s: %w", dir, err))
		}
	}
	return errors.Join(errs...)
}

// killCgroup sends SIGKILL to every process in the group.
func killCgroup(dir string) {
	if os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0) == nil {
		return
	}
	b, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// joinCgroup is stage 1's part: it opens cgroup.procs of each of dirs and
// of each one's parent (this process's group) before the pivot hides them;
// enter moves stage 1 into the server's group (so that the stage 2 it then
// starts is inside from its first instruction), and leave moves stage 1
// back out, so that only the server's tree counts.
type cgroupJoin struct {
	inner, outer []int
}

func openCgroupJoin(dirs []string) (*cgroupJoin, error) {
	j := &cgroupJoin{}
	for _, d := range dirs {
		in, err := unix.Open(filepath.Join(d, "cgroup.procs"), unix.O_WRONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, fmt.Errorf("joining the server's cgroup: %w", err)
		}
		out, err := unix.Open(filepath.Join(filepath.Dir(d), "cgroup.procs"), unix.O_WRONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			unix.Close(in)
			return nil, fmt.Errorf("joining the server's cgroup: %w", err)
		}
		j.inner, j.outer = append(j.inner, in), append(j.outer, out)
	}
	return j, nil
}

func (j *cgroupJoin) move(fds []int) error {
	for _, fd := range fds {
		// "0" is the writing process itself, in v1 and v2.
		if _, err := unix.Write(fd, []byte("0")); err != nil {
			return fmt.Errorf("moving into the server's cgroup: %w", err)
		}
	}
	return nil
}

func (j *cgroupJoin) enter() error { return j.move(j.inner) }
func (j *cgroupJoin) leave() error { return j.move(j.outer) }

// setRlimits sets the rlimits of l on the calling process (stage 2, just
// before it executes the server; the server and its children inherit
// them). RLIMIT_DATA bounds memory only when memoryCgroup is false.
func setRlimits(l policy.Limits, memoryCgroup bool) error {
	set := func(name string, res int, v uint64) error {
		// Never above the hard limit this process already has: raising it
		// needs a capability, and the lower one is the stricter anyway.
		var cur unix.Rlimit
		if unix.Getrlimit(res, &cur) == nil && cur.Max < v {
			v = cur.Max
		}
		if err := unix.Setrlimit(res, &unix.Rlimit{Cur: v, Max: v}); err != nil {
			return fmt.Errorf("setting %s to %d: %w", name, v, err)
		}
		return nil
	}
	if mutation.Off("limits") {
		return nil
	}
	if err := set("RLIMIT_NOFILE", unix.RLIMIT_NOFILE, uint64(l.Files)); err != nil {
		return err
	}
	if err := set("RLIMIT_FSIZE", unix.RLIMIT_FSIZE, uint64(l.FileSize)); err != nil {
		return err
	}
	if err := set("RLIMIT_CORE", unix.RLIMIT_CORE, 0); err != nil {
		return err
	}
	if err := set("RLIMIT_NPROC", unix.RLIMIT_NPROC, uint64(l.Processes)); err != nil {
		return err
	}
	if !memoryCgroup {
		return set("RLIMIT_DATA", unix.RLIMIT_DATA, uint64(l.Memory))
	}
	return nil
}
