//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/mcpform/mcpform/internal/mutation"
)

// minLandlockABI is the oldest Landlock ABI the sandbox accepts. ABI 3
// (Linux 6.2) is the first that restricts truncate(2); before it "Landlock
// cannot restrict truncate operations" (kernel docs, "Previous
// limitations"), so a read-only path could still be emptied.
const minLandlockABI = 3

var (
	supportedOnce sync.Once
	supportedErr  error
)

// Supported reports nil when this kernel can enforce the sandbox: Landlock
// ABI 3 or later, seccomp filters, and user namespaces this process may
// create (with mount, pid and network namespaces inside them). Otherwise the
// error names what is missing and how to enable it. The result is computed
// once per process.
func Supported() error {
	supportedOnce.Do(func() { supportedErr = supported() })
	return supportedErr
}

func supported() error {
	if _, ok := auditArch[runtime.GOARCH]; !ok {
		return fmt.Errorf("sandbox: the seccomp filter is written for amd64 and arm64, not %s", runtime.GOARCH)
	}
	abi, err := ll.LandlockGetABIVersion()
	switch {
	case errors.Is(err, unix.ENOSYS):
		return errors.New("sandbox: this kernel has no Landlock (it needs Linux 6.2 or later built with CONFIG_SECURITY_LANDLOCK=y)")
	case errors.Is(err, unix.EOPNOTSUPP):
		return errors.New("sandbox: Landlock is built into this kernel but not enabled; add \"landlock\" to the lsm= kernel parameter (for example lsm=landlock,lockdown,yama,integrity,apparmor,bpf) and reboot")
	case err != nil:
		return fmt.Errorf("sandbox: querying the Landlock ABI version: %w", err)
	case abi < minLandlockABI:
		return fmt.Errorf("sandbox: Landlock ABI %d is too old; ABI %d (Linux 6.2) or later is needed so read-only files cannot be truncated", abi, minLandlockABI)
	}
	if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("sandbox: this kernel has no seccomp (CONFIG_SECCOMP): %w", err)
	}
	if b, err := os.ReadFile("/proc/sys/kernel/seccomp/actions_avail"); err != nil || !strings.Contains(string(b), "kill_process") || !strings.Contains(string(b), "errno") {
		return errors.New("sandbox: this kernel lacks seccomp filter actions kill_process and errno (CONFIG_SECCOMP_FILTER, Linux 4.14+)")
	}
	if n, err := readInt("/proc/sys/user/max_user_namespaces"); err == nil && n == 0 {
		return errors.New("sandbox: user namespaces are disabled; run: sudo sysctl -w user.max_user_namespaces=15000")
	}
	if os.Geteuid() != 0 {
		if n, err := readInt("/proc/sys/kernel/unprivileged_userns_clone"); err == nil && n == 0 {
			return errors.New("sandbox: unprivileged user namespaces are disabled; run: sudo sysctl -w kernel.unprivileged_userns_clone=1")
		}
		if n, err := readInt("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"); err == nil && n != 0 {
			return errors.New("sandbox: AppArmor restricts unprivileged user namespaces (Ubuntu 23.10 and later). Allow them for mcpform with an AppArmor profile granting \"userns,\" to its binary (see the Ubuntu blog post \"Restricted unprivileged user namespaces are coming to Ubuntu 23.10\"), or system-wide with: sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0")
		}
	}
	// The sysctls above are not the whole story (containers, seccomp
	// profiles, LSMs can all refuse): try it. ForkExec of a path that does not
	// exist clones with every namespace and the id maps, and then fails in
	// the child with ENOENT, which proves the clone worked.
	attr := &syscall.ProcAttr{Sys: nsAttr()}
	_, err = syscall.ForkExec("/nonexistent/mcpform-sandbox-probe", []string{"probe"}, attr)
	if !errors.Is(err, syscall.ENOENT) {
		return fmt.Errorf("sandbox: cannot create user, mount, pid and network namespaces: %w (in a container, allow clone/unshare of user namespaces; on Ubuntu 23.10+ see kernel.apparmor_restrict_unprivileged_userns)", err)
	}
	return nil
}

// Features describes the kernel features the sandbox found here, for
// -explain-sandbox.
func Features() string {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil {
		return "no Landlock"
	}
	memfd := "memfd_create refused without MFD_NOEXEC_SEAL (vm.memfd_noexec needs the host's root and Linux 6.3)"
	if _, err := os.Stat("/proc/sys/vm/memfd_noexec"); err == nil && os.Geteuid() == 0 {
		memfd = "vm.memfd_noexec=2 in the sandbox's pid namespace"
	}
	var uts unix.Utsname
	unix.Uname(&uts)
	return fmt.Sprintf("Linux %s, Landlock ABI %d, seccomp, mount_setattr; memfds: %s", unix.ByteSliceToString(uts.Release[:]), abi, memfd)
}

func readInt(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// nsAttr is how stage 1 is cloned: into new user, mount, pid, network, IPC,
// UTS and cgroup namespaces (the last so /proc/self/cgroup names no host
// path), as root of the new user namespace (which maps only
// the caller's own uid and gid, so that root owns no more outside than the
// caller does), killed when its parent thread dies.
func nsAttr() *syscall.SysProcAttr {
	if mutation.Off("netns") {
		a := nsAttr1()
		a.Cloneflags &^= syscall.CLONE_NEWNET
		return a
	}
	return nsAttr1()
}

func nsAttr1() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID |
			syscall.CLONE_NEWNET | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS | syscall.CLONE_NEWCGROUP,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		// Writes "deny" to setgroups before the gid map, as unprivileged
		// callers must; the sandbox never needs supplementary groups.
		GidMappingsEnableSetgroups: false,
		Pdeathsig:                  syscall.SIGKILL,
	}
}

// Command rewrites cmd, which already holds the server's argv, environment
// and working directory, so that Start runs it inside the sandbox:
//
//   - cmd becomes a re-execution of this binary (/proc/self/exe) as stage 1,
//     cloned into new user, mount, pid, network, IPC, UTS and cgroup
//     namespaces and killed (SIGKILL) if its parent dies. Stage 1 is PID 1 of the new pid
//     namespace: when it exits, the kernel kills every process left in it,
//     so the server's whole process tree ends with the server.
//   - Stage 1 mounts a fresh /proc, brings up loopback, bridges ProxyAddr to
//     spec.EgressSocket when spec.Network is set, and starts stage 2, whose
//     exit status it returns (128+N for a server killed by signal N; 125 when
//     the sandbox itself failed to start).
//   - Stage 2 sets no_new_privs, drops every capability, applies Landlock
//     (runtime base, Read, Write, Tmp; TCP connect only to ProxyAddr when
//     Network), installs the seccomp filter and executes the server.
//
// The environment gains TMPDIR=spec.Tmp and, with Network, the proxy
// variables (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, their lowercase forms,
// NODE_USE_ENV_PROXY=1). cmd must not have SysProcAttr or ExtraFiles set:
// the sandbox owns the first and passes no descriptors but stdio.
//
// The binary must call MaybeRunStage first thing in main (or TestMain).
// Command calls Supported and fails closed.
func Command(cmd *exec.Cmd, spec Spec) error {
	if err := Supported(); err != nil {
		return err
	}
	if cmd.Err != nil {
		return fmt.Errorf("sandboxing %q: %w", cmd.Path, cmd.Err)
	}
	if cmd.Process != nil {
		return errors.New("sandboxing a command that has already started")
	}
	if cmd.SysProcAttr != nil {
		return errors.New("sandboxing a command with SysProcAttr set: the sandbox sets it itself")
	}
	if len(cmd.ExtraFiles) > 0 {
		return errors.New("sandboxing a command with ExtraFiles: a sandboxed server gets only stdin, stdout and stderr")
	}
	cfg, env, err := build(cmd, spec)
	if err != nil {
		return err
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("sandboxing %q: %w", cmd.Path, err)
	}

	cmd.Path = "/proc/self/exe"
	cmd.Args = []string{"mcpform-sandbox"}
	cmd.Env = append(append(env, envStage+"=1", envConfig+"="+string(b)), mutation.Env()...)
	cmd.SysProcAttr = nsAttr()
	return nil
}

// MaybeRunStage must be the first call in main (and in TestMain of test
// binaries that start sandboxed servers): when this process is a sandbox
// stage, re-executed by Command, it runs the stage and never returns.
// Otherwise it returns at once.
func MaybeRunStage() {
	stage, ok := os.LookupEnv(envStage)
	if !ok {
		return
	}
	var cfg stageConfig
	if err := json.Unmarshal([]byte(os.Getenv(envConfig)), &cfg); err != nil {
		fail("stage "+stage, fmt.Errorf("reading configuration: %w", err))
	}
	switch stage {
	case "1":
		runStage1(cfg)
	case "2":
		runStage2(cfg)
	}
	fail("stage "+stage, errors.New("unknown stage"))
}
