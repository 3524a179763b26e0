//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/mcpform/mcpform/internal/mutation"
)

// runStage1 is PID 1 of the sandbox's pid namespace and root of its user
// namespace. It prepares the namespaces, starts stage 2 (which becomes the
// server), reaps every orphan re-parented to it, forwards signals to the
// server, and exits with the server's status. Its exit ends the namespace:
// "If the init process of a PID namespace terminates, the kernel terminates
// all of the processes in the namespace via a SIGKILL signal"
// (pid_namespaces(7)).
func runStage1(cfg stageConfig) {
	sigs := make(chan os.Signal, 32)
	signal.Notify(sigs, unix.SIGCHLD, unix.SIGTERM, unix.SIGINT, unix.SIGHUP, unix.SIGQUIT, unix.SIGUSR1, unix.SIGUSR2, unix.SIGWINCH)

	// Keep mounts made here out of the parent namespace (a mount namespace
	// created with a user namespace is already a slave; this makes it plain).
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		fail("stage 1", fmt.Errorf("making mounts private: %w", err))
	}
	// The egress socket is not in the server's view: the bridge reaches it
	// through a descriptor opened now, which the server cannot use (it
	// cannot open stage 1's /proc/1/fd: Landlock denies it ptrace access).
	egressSock := ""
	if cfg.Network {
		fd, err := unix.Open(cfg.EgressSocket, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			fail("stage 1", fmt.Errorf("opening the egress socket: %w", err))
		}
		egressSock = "/proc/self/fd/" + strconv.Itoa(fd)
	}
	var cgroup *cgroupJoin
	if len(cfg.CgroupDirs) > 0 {
		var err error
		if cgroup, err = openCgroupJoin(cfg.CgroupDirs); err != nil {
			fail("stage 1", err)
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		wd = "/"
	}
	// The sysctl is the pid namespace's, whichever /proc shows it: set it
	// before the view's /proc, which is read-only.
	memfdSealed := memfdNoexec()
	if err := enterView(cfg.Rules, wd, privateTmp{Path: cfg.Tmp, Size: cfg.Limits.Memory}); err != nil {
		fail("stage 1", fmt.Errorf("building the server's filesystem view: %w", err))
	}
	if err := loopbackUp(); err != nil && !mutation.Off("netns") {
		fail("stage 1", fmt.Errorf("bringing up loopback: %w", err))
	}
	// Stage 1's own descriptors are bounded by the soft limit; the hard one
	// stays for stage 2, which sets the server's (and the server cannot
	// change stage 1's: seccomp allows prlimit on the caller only).
	var nofile unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &nofile) == nil && nofile.Max > stage1Files {
		unix.Setrlimit(unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: stage1Files, Max: nofile.Max})
	}
	if cfg.Network {
		l, err := net.Listen("tcp4", ProxyAddr)
		if err != nil {
			fail("stage 1", fmt.Errorf("listening for the egress bridge: %w", err))
		}
		go bridge(l, egressSock)
	}

	env := setEnv(os.Environ(), envStage+"=2")
	if memfdSealed {
		env = setEnv(env, envMemfdSealed+"=1")
	}
	// Stage 2 starts inside the server's cgroup; stage 1 leaves it at once,
	// so only the server's own tree counts against its limits.
	if cgroup != nil {
		if err := cgroup.enter(); err != nil {
			fail("stage 1", err)
		}
	}
	pid, err := syscall.ForkExec("/proc/self/exe", []string{"mcpform-sandbox-server"}, &syscall.ProcAttr{
		Env:   env,
		Files: []uintptr{0, 1, 2},
		// A new session has no controlling terminal to inject input into.
		Sys: &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		fail("stage 1", fmt.Errorf("starting stage 2: %w", err))
	}
	if cgroup != nil {
		if err := cgroup.leave(); err != nil {
			unix.Kill(pid, unix.SIGKILL)
			fail("stage 1", err)
		}
	}
	// Only the server holds the ends of stdin and stdout now, so the client
	// sees EOF exactly when the server closes them.
	if null, err := unix.Open("/dev/null", unix.O_RDWR|unix.O_CLOEXEC, 0); err == nil {
		unix.Dup3(null, 0, 0)
		unix.Dup3(null, 1, 0)
		unix.Close(null)
	}

	for sig := range sigs {
		if sig != unix.SIGCHLD {
			unix.Kill(pid, sig.(syscall.Signal))
			continue
		}
		for {
			var ws unix.WaitStatus
			wpid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
			if wpid <= 0 || err != nil {
				break
			}
			if wpid != pid {
				continue // an orphan re-parented to PID 1
			}
			switch {
			case ws.Exited():
				os.Exit(ws.ExitStatus())
			case ws.Signaled():
				os.Exit(128 + int(ws.Signal()))
			}
		}
	}
}

// memfdNoexec makes every memfd created in this pid namespace
// non-executable (vm.memfd_noexec = 2, Linux 6.3: a memfd gets
// MFD_NOEXEC_SEAL, and MFD_EXEC is refused), and reports whether it could.
// The sysctl is writable only by the host's root; otherwise the seccomp
// filter refuses memfd_create without MFD_NOEXEC_SEAL instead.
func memfdNoexec() bool {
	if mutation.Off("memfd") {
		return true // and nothing set: the filter lets every memfd_create through
	}
	if err := os.WriteFile("/proc/sys/vm/memfd_noexec", []byte("2"), 0); err != nil {
		return false
	}
	b, err := os.ReadFile("/proc/sys/vm/memfd_noexec")
	return err == nil && strings.TrimSpace(string(b)) == "2"
}

// loopbackUp sets IFF_UP on lo, the only interface of a new network
// namespace.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// bridgeMaxConns bounds the bridge's connections at once, as the egress
// proxy bounds its own (egress.MaxConns): stage 1 is outside the server's
// cgroup and rlimits, so a server that opened connections and never closed
// them must not be able to spend stage 1's descriptors and memory.
const bridgeMaxConns = 256

// stage1Files is stage 1's own descriptor limit: the bridge's connections
// (two sockets and a splice pipe pair each way at most), and a few more.
const stage1Files = 8*bridgeMaxConns + 64

// bridge joins each connection to ProxyAddr inside the namespace to the
// egress proxy's unix socket outside it. A socket on the filesystem is
// reachable across network namespaces; the server itself cannot use it
// (seccomp refuses AF_UNIX sockets), only this bridge can. A connection over
// bridgeMaxConns is closed at once; one whose proxy side has ended is closed
// whole, whatever the server still sends; a failed Accept (out of
// descriptors) is waited out, never the end of the bridge.
func bridge(l net.Listener, sock string) {
	slots := make(chan struct{}, bridgeMaxConns)
	backoff := time.Millisecond
	for {
		c, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(backoff)
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = time.Millisecond
		select {
		case slots <- struct{}{}:
		default:
			c.Close()
			continue
		}
		go func() {
			defer func() { <-slots }()
			defer c.Close()
			u, err := net.Dial("unix", sock)
			if err != nil {
				return
			}
			defer u.Close()
			go func() {
				io.Copy(u, c)
				u.(*net.UnixConn).CloseWrite()
			}()
			// The proxy's side decides: once it has ended, closing both
			// ends the copy from the server too.
			io.Copy(c, u)
		}()
	}
}

// runStage2 confines this process and executes the server in its place.
// Every restriction here is per thread (no_new_privs, capabilities, the
// Landlock domain, the seccomp filter); the thread is locked and never
// unlocked, and it is the one that calls execve, so the server inherits
// exactly this thread's restrictions. This is go-landlock's documented
// pattern for "enforce the ruleset and immediately call syscall.Exec".
func runStage2(cfg stageConfig) {
	runtime.LockOSThread()
	memfdSealed := os.Getenv(envMemfdSealed) == "1"
	env := withoutEnv(os.Environ(), envStage, envConfig, envMemfdSealed)

	llcfg, rules, err := landlockRules(cfg)
	if err != nil {
		fail("stage 2", err)
	}
	// The ruleset is built before anything is dropped: it opens the paths.
	fd, flags, err := llcfg.NewRulesetFD(rules...)
	if err != nil {
		fail("stage 2", fmt.Errorf("building the Landlock ruleset: %w", err))
	}
	if fd < 0 {
		fail("stage 2", errors.New("building the Landlock ruleset: nothing to enforce"))
	}
	// No descriptor but stdio reaches the server.
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		fail("stage 2", fmt.Errorf("marking descriptors close-on-exec: %w", err))
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		fail("stage 2", fmt.Errorf("setting no_new_privs: %w", err))
	}
	if err := dropCapabilities(); err != nil {
		fail("stage 2", err)
	}
	if mutation.Off("landlock") {
		// Nothing enforced.
	} else if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		fail("stage 2", fmt.Errorf("enforcing Landlock: %w", err))
	}
	unix.Close(fd)
	// Last of the capabilities: the effective and permitted sets.
	var data [2]unix.CapUserData
	if err := unix.Capset(&unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}, &data[0]); err != nil {
		fail("stage 2", fmt.Errorf("clearing capabilities: %w", err))
	}
	if err := setRlimits(cfg.Limits, cfg.MemoryCgroup); err != nil {
		fail("stage 2", err)
	}
	if mutation.Off("seccomp") {
		// No filter.
	} else if err := installSeccomp(memfdSealed); err != nil {
		fail("stage 2", err)
	}
	err = syscall.Exec(cfg.Path, cfg.Args, env)
	fail("stage 2", fmt.Errorf("executing %s: %w", cfg.Path, err))
}

// Securebits (linux/securebits.h), not in x/sys/unix.
const (
	secbitNoRoot                  = 1 << 0
	secbitNoRootLocked            = 1 << 1
	secbitNoSetuidFixup           = 1 << 2
	secbitNoSetuidFixupLocked     = 1 << 3
	secbitKeepCapsLocked          = 1 << 5
	secbitNoCapAmbientRaise       = 1 << 6
	secbitNoCapAmbientRaiseLocked = 1 << 7
	secbitsNoRootForever          = secbitNoRoot | secbitNoRootLocked | secbitNoSetuidFixup | secbitNoSetuidFixupLocked | secbitKeepCapsLocked | secbitNoCapAmbientRaise | secbitNoCapAmbientRaiseLocked
)

// dropCapabilities empties the bounding and ambient sets and locks the
// securebits that would otherwise give uid 0 (which the server is, inside
// its user namespace) a full set again at execve: "SECBIT_NOROOT: If this
// bit is set, then the kernel does not grant capabilities when a
// set-user-ID-root program is executed, or when a process with an effective
// or real UID of 0 calls execve(2)" (capabilities(7)).
func dropCapabilities() error {
	last := 40
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			last = n
		}
	}
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("dropping capability %d from the bounding set: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clearing ambient capabilities: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, secbitsNoRootForever, 0, 0, 0); err != nil {
		return fmt.Errorf("locking securebits: %w", err)
	}
	return nil
}

// landlockConfigs are go-landlock's presets indexed by ABI version - 1.
var landlockConfigs = []landlock.Config{
	landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5, landlock.V6,
	landlock.V7, landlock.V8, landlock.V9, landlock.V10, landlock.V11,
}

// Filesystem rights per access kind. Nothing the server can write is
// executable, and no rule grants ioctl on devices or device creation.
const (
	rightsRead  = ll.AccessFSReadFile | ll.AccessFSReadDir
	rightsExec  = rightsRead | ll.AccessFSExecute
	rightsWrite = rightsRead | ll.AccessFSWriteFile | ll.AccessFSTruncate |
		ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSMakeDir |
		ll.AccessFSMakeReg | ll.AccessFSMakeSym | ll.AccessFSMakeFifo |
		ll.AccessFSMakeSock | ll.AccessFSRefer
	// Opening /dev/null with O_TRUNC ("> /dev/null") needs the truncate right.
	rightsDev = ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSTruncate
	// Rights that apply to a file that is not a directory (landlock.h:
	// "a file ... can only receive these access rights").
	rightsFile = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile |
		ll.AccessFSTruncate | ll.AccessFSIoctlDev
)

// landlockRules turns the stage configuration into a Landlock
// configuration for exactly this kernel's ABI (not best effort: anything
// the ABI handles is denied unless a rule grants it) and its rules.
func landlockRules(cfg stageConfig) (landlock.Config, []landlock.Rule, error) {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil || abi < minLandlockABI {
		return landlock.Config{}, nil, fmt.Errorf("the Landlock ABI (%d) is unavailable or too old (%v)", abi, err)
	}
	c := landlockConfigs[min(abi, len(landlockConfigs))-1]
	// Binding is harmless in a namespace with only loopback; connecting is
	// what could leave it, so only connect is handled, and allowed to the
	// bridge alone. (The network namespace is the boundary; this is the
	// second wall.) UDP is refused by seccomp before Landlock sees it.
	c.HandledAccessNet &^= ll.AccessNetBindTCP | ll.AccessNetBindUDP
	var rules []landlock.Rule
	if cfg.Network && c.HandledAccessNet&ll.AccessNetConnectTCP != 0 {
		_, port, _ := net.SplitHostPort(ProxyAddr)
		p, _ := strconv.Atoi(port)
		rules = append(rules, landlock.ConnectTCP(uint16(p)))
	}
	for _, r := range grantable(cfg.Rules) {
		var rights landlock.AccessFSSet
		switch r.Access {
		case accessRead:
			rights = rightsRead
		case accessExec:
			rights = rightsExec
		case accessWrite:
			rights = rightsWrite
		case accessDev:
			rights = rightsDev
		default:
			return c, nil, fmt.Errorf("path %q: unknown access %q", r.Path, r.Access)
		}
		optional := optionalRule(r)
		fi, err := os.Stat(r.Path)
		if err != nil {
			if optional && errors.Is(err, os.ErrNotExist) {
				continue
			}
			return c, nil, fmt.Errorf("sandbox path %q: %w", r.Path, err)
		}
		if !fi.IsDir() {
			rights &= rightsFile
		}
		rights &= c.HandledAccessFS
		if rights != 0 {
			rules = append(rules, landlock.PathAccess(rights, r.Path))
		}
	}
	return c, rules, nil
}
