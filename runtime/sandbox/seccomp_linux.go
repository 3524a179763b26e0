//go:build linux

package sandbox

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// auditArch is the AUDIT_ARCH value of the native syscall ABI per GOARCH.
// A syscall made through any other ABI (i386 "int 0x80" on x86_64, x32, or
// arm32 compat on arm64) kills the process: the filter's numbers are those of
// the native table, and another table would let a denied syscall through
// under a different number.
var auditArch = map[string]uint32{
	"amd64": unix.AUDIT_ARCH_X86_64,
	"arm64": unix.AUDIT_ARCH_AARCH64,
}

// deniedSyscalls fail with EPERM: everything that changes namespaces or
// mounts, inspects or writes other processes, loads code into the kernel,
// or reaches kernel subsystems a server has no use for and that carry a
// history of privilege escalations. io_uring is here because its
// operations (socket, connect, openat) bypass the checks below.
var deniedSyscalls = append([]uintptr{
	unix.SYS_UNSHARE, unix.SYS_SETNS,
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_CHROOT,
	unix.SYS_MOVE_MOUNT, unix.SYS_OPEN_TREE, unix.SYS_OPEN_TREE_ATTR, unix.SYS_FSOPEN, unix.SYS_FSCONFIG,
	unix.SYS_FSMOUNT, unix.SYS_FSPICK, unix.SYS_MOUNT_SETATTR,
	unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV,
	unix.SYS_PIDFD_GETFD, unix.SYS_KCMP,
	unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD,
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
	unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD,
	unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE,
	unix.SYS_OPEN_BY_HANDLE_AT, unix.SYS_NAME_TO_HANDLE_AT,
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
	unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_REBOOT, unix.SYS_SYSLOG, unix.SYS_ACCT,
	unix.SYS_SETTIMEOFDAY, unix.SYS_CLOCK_SETTIME, unix.SYS_ADJTIMEX, unix.SYS_CLOCK_ADJTIME,
	unix.SYS_QUOTACTL, unix.SYS_QUOTACTL_FD, unix.SYS_VHANGUP, unix.SYS_FANOTIFY_INIT,
	unix.SYS_LOOKUP_DCOOKIE, unix.SYS_NFSSERVCTL, unix.SYS_MEMFD_SECRET,
}, archDeniedSyscalls...)

// modeSyscall is a syscall that takes a file mode. The filter refuses it
// when the mode has the setuid or setgid bit: the server is uid 0 of a
// namespace that maps mcpform's own uid, so it owns what it creates and the
// kernel would let it set them, and nosuid holds only inside the sandbox.
// Outside, such a file in a write path would run as mcpform's user for
// anyone. With flagsArg >= 0 the mode counts only when the flags create a
// file (O_CREAT, O_TMPFILE).
type modeSyscall struct {
	nr                uintptr
	modeArg, flagsArg int
}

var modeSyscalls = append([]modeSyscall{
	{unix.SYS_OPENAT, 3, 2},
	{unix.SYS_FCHMOD, 1, -1},
	{unix.SYS_FCHMODAT, 2, -1},
	{unix.SYS_FCHMODAT2, 2, -1},
	{unix.SYS_MKNODAT, 2, -1},
}, archModeSyscalls...)

// createFlags are the open flags with which the mode argument is used.
const createFlags = unix.O_CREAT | unix.O_TMPFILE&^unix.O_DIRECTORY

// cloneNamespaceFlags are the clone(2) flags that create namespaces. They
// are all in the low 32 bits of the flags argument.
const cloneNamespaceFlags = unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID |
	unix.CLONE_NEWNET | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWTIME

// Offsets into struct seccomp_data. Arguments are 64-bit; the filter reads
// their low 32 bits (little-endian), which is all the kernel uses of the int
// and unsigned int arguments checked here.
const (
	offNr   = 0
	offArch = 4
)

func offArg(i int) uint32 { return 16 + 8*uint32(i) }

// seccompFilter assembles the filter:
//
//   - a foreign syscall ABI (see auditArch), or x32 on amd64: kill the process;
//   - socket(2): only AF_INET/AF_INET6 SOCK_STREAM with protocol 0 or TCP
//     (so no UDP, raw, ICMP, SCTP or Multipath TCP, IPPROTO_MPTCP being a
//     protocol of SOCK_STREAM), and AF_NETLINK with NETLINK_ROUTE (getifaddrs,
//     glibc's AI_ADDRCONFIG; it sees only this namespace). Everything else,
//     AF_UNIX included, fails with EPERM: Landlock below ABI 9 does not
//     restrict connect(2) to a pathname socket, and the host's sockets
//     (ssh-agent, docker, D-Bus) would otherwise be a way out.
//   - socketpair(2): only SOCK_STREAM and SOCK_SEQPACKET. A datagram end
//     can be disconnected (connect AF_UNSPEC) and then send to any unix
//     socket address; a stream end stays tied to its peer.
//   - modeSyscalls with S_ISUID or S_ISGID in the mode: EPERM; openat2(2)
//     fails with ENOSYS (its mode is in memory the filter cannot read; libc
//     and Go use openat).
//   - prlimit64(2) on any process but the caller (pid 0): EPERM, so the
//     server cannot lower stage 1's limits.
//   - memfd_create(2), when the kernel cannot make the sandbox's memfds
//     non-executable (vm.memfd_noexec, see stage 1): only with
//     MFD_NOEXEC_SEAL, so no memfd can be executed. memfd_secret: EPERM.
//   - clone(2) with a namespace flag: EPERM. clone3(2) passes its flags in
//     memory a filter cannot read, so it fails with ENOSYS, which makes glibc
//     and Go fall back to clone(2).
//   - ioctl(2) TIOCSTI and TIOCLINUX (faking terminal input): EPERM.
//   - deniedSyscalls: EPERM.
//   - everything else is allowed.
func seccompFilter(memfdSealed bool) ([]unix.SockFilter, error) {
	arch, ok := auditArch[runtime.GOARCH]
	if !ok {
		return nil, fmt.Errorf("no seccomp filter for %s", runtime.GOARCH)
	}
	var a asm
	a.ld(offArch)
	a.jeq(arch, "", "kill")
	a.ld(offNr)
	if runtime.GOARCH == "amd64" {
		a.jge(x32SyscallBit, "kill", "")
	}
	a.jeq(unix.SYS_SOCKET, "socket", "")
	a.jeq(unix.SYS_SOCKETPAIR, "socketpair", "")
	if !memfdSealed {
		a.jeq(unix.SYS_MEMFD_CREATE, "memfd", "")
	}
	a.jeq(unix.SYS_CLONE, "clone", "")
	a.jeq(unix.SYS_CLONE3, "enosys", "")
	a.jeq(unix.SYS_OPENAT2, "enosys", "")
	a.jeq(unix.SYS_PRLIMIT64, "prlimit", "")
	for i, m := range modeSyscalls {
		a.jeq(uint32(m.nr), fmt.Sprintf("mode%d", i), "")
	}
	a.jeq(unix.SYS_IOCTL, "ioctl", "")
	for _, nr := range deniedSyscalls {
		a.jeq(uint32(nr), "eperm", "")
	}
	a.ret(unix.SECCOMP_RET_ALLOW)

	a.label("socket")
	a.ld(offArg(0))
	a.jeq(unix.AF_INET, "inet", "")
	a.jeq(unix.AF_INET6, "inet", "")
	a.jeq(unix.AF_NETLINK, "netlink", "eperm")
	a.label("inet")
	a.ld(offArg(1))
	a.and(0xf) // SOCK_TYPE_MASK: drop SOCK_NONBLOCK and SOCK_CLOEXEC
	a.jeq(unix.SOCK_STREAM, "", "eperm")
	a.ld(offArg(2))
	a.jeq(0, "allow", "")
	a.jeq(unix.IPPROTO_TCP, "allow", "eperm")
	a.label("netlink")
	a.ld(offArg(2))
	a.jeq(unix.NETLINK_ROUTE, "allow", "eperm")

	for i, m := range modeSyscalls {
		a.label(fmt.Sprintf("mode%d", i))
		if m.flagsArg >= 0 {
			a.ld(offArg(m.flagsArg))
			a.jset(createFlags, "", "allow")
		}
		a.ld(offArg(m.modeArg))
		a.jset(unix.S_ISUID|unix.S_ISGID, "eperm", "allow")
	}

	a.label("prlimit")
	a.ld(offArg(0))
	a.jeq(0, "allow", "eperm")

	a.label("socketpair")
	a.ld(offArg(1))
	a.and(0xf)
	a.jeq(unix.SOCK_STREAM, "allow", "")
	a.jeq(unix.SOCK_SEQPACKET, "allow", "eperm")

	a.label("memfd")
	a.ld(offArg(1))
	a.jset(unix.MFD_NOEXEC_SEAL, "allow", "eperm")

	a.label("clone")
	a.ld(offArg(0))
	a.jset(cloneNamespaceFlags, "eperm", "allow")

	a.label("ioctl")
	a.ld(offArg(1))
	a.jeq(unix.TIOCSTI, "eperm", "")
	a.jeq(unix.TIOCLINUX, "eperm", "allow")

	a.label("allow")
	a.ret(unix.SECCOMP_RET_ALLOW)
	a.label("eperm")
	a.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM))
	a.label("enosys")
	a.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS))
	a.label("kill")
	a.ret(unix.SECCOMP_RET_KILL_PROCESS)
	return a.assemble()
}

// installSeccomp installs the filter on the calling thread (no TSYNC: the
// thread is the one that executes the server). no_new_privs must be set.
// memfdSealed says whether the kernel already makes every memfd of the
// sandbox non-executable.
func installSeccomp(memfdSealed bool) error {
	prog, err := seccompFilter(memfdSealed)
	if err != nil {
		return fmt.Errorf("assembling the seccomp filter: %w", err)
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
		return fmt.Errorf("installing the seccomp filter: %w", err)
	}
	runtime.KeepAlive(prog)
	return nil
}

// asm is a tiny classic-BPF assembler with forward jumps to labels ("" is
// the next instruction), enough for a seccomp filter.
type asm struct {
	ins    []unix.SockFilter
	jumps  map[int][2]string
	labels map[string]int
}

func (a *asm) emit(code uint16, k uint32, jt, jf string) {
	if a.jumps == nil {
		a.jumps, a.labels = map[int][2]string{}, map[string]int{}
	}
	if jt != "" || jf != "" {
		a.jumps[len(a.ins)] = [2]string{jt, jf}
	}
	a.ins = append(a.ins, unix.SockFilter{Code: code, K: k})
}

func (a *asm) ld(off uint32)                { a.emit(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, off, "", "") }
func (a *asm) and(k uint32)                 { a.emit(unix.BPF_ALU|unix.BPF_AND|unix.BPF_K, k, "", "") }
func (a *asm) ret(k uint32)                 { a.emit(unix.BPF_RET|unix.BPF_K, k, "", "") }
func (a *asm) jeq(k uint32, jt, jf string)  { a.emit(unix.BPF_JMP|unix.BPF_JEQ|unix.BPF_K, k, jt, jf) }
func (a *asm) jge(k uint32, jt, jf string)  { a.emit(unix.BPF_JMP|unix.BPF_JGE|unix.BPF_K, k, jt, jf) }
func (a *asm) jset(k uint32, jt, jf string) { a.emit(unix.BPF_JMP|unix.BPF_JSET|unix.BPF_K, k, jt, jf) }
func (a *asm) label(name string)            { a.labels[name] = len(a.ins) }

func (a *asm) assemble() ([]unix.SockFilter, error) {
	for i, j := range a.jumps {
		for n, name := range j {
			if name == "" {
				continue
			}
			to, ok := a.labels[name]
			if !ok {
				return nil, fmt.Errorf("bpf: undefined label %q", name)
			}
			off := to - i - 1
			if off < 0 || off > 255 {
				return nil, fmt.Errorf("bpf: jump from %d to %q out of range", i, name)
			}
			if n == 0 {
				a.ins[i].Jt = uint8(off)
			} else {
				a.ins[i].Jf = uint8(off)
			}
		}
	}
	if len(a.ins) > 4096 {
		return nil, fmt.Errorf("bpf: %d instructions", len(a.ins))
	}
	return a.ins, nil
}
