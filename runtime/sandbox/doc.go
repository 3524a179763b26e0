// Package sandbox confines a server process on Linux: user, mount, pid and
// network namespaces, Landlock for the filesystem, and a seccomp filter. It
// fails closed: without kernel support a sandboxed server does not start.
//
// Its neighbours: package runtime (mcpform run) builds a Spec from the lock's
// policy.sandbox, calls Command on the server's exec.Cmd, and serves
// runtime/egress on Spec.EgressSocket; cmd/mcpform calls MaybeRunStage
// first thing in main.
//
// # Use
//
//	proxy, err := egress.New(policy.Network.Allow, auditEgress) // one proxy per server
//	l, err := net.Listen("unix", filepath.Join(privateDir, "egress.sock"))
//	go proxy.Serve(l)
//	defer proxy.Close()
//
//	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
//	cmd.Env = passedThrough // only the lock's envPassthrough
//	err = sandbox.Command(cmd, sandbox.Spec{
//		Read: read, Write: write, Tmp: tmp, // expanded, existing
//		Network: len(policy.Network.Allow) > 0, EgressSocket: l.Addr().String(),
//		Protect: protect, // sandbox.State{Lock: …, Audit: …, Taint: …}.Protected()
//		Limits: sb.Limits.Effective(), Cgroup: cg, // cg, err := sandbox.NewCgroup(limits); defer cg.Remove()
//	})
//	if err != nil { /* do not start the server: fail closed */ }
//	err = cmd.Start() // cmd.Process is stage 1; killing it kills the whole sandbox
//
// # How a server starts
//
// Command turns the server's command into a re-execution of the running
// binary (/proc/self/exe), so no helper binary has to be installed and
// trusted:
//
//	mcpform ── stage 1 ── stage 2 ══exec══> server
//
// Stage 1 is cloned into new user, mount, pid, network, IPC, UTS and cgroup
// namespaces, as root of the user namespace (mapping only the caller's own
// uid and gid), with SIGKILL as its parent-death signal. It is PID 1 of the
// new pid namespace: it builds the server's filesystem view (below), with a
// fresh /proc (so the host's processes and mcpform's environment are
// invisible), makes the namespace's memfds non-executable where the kernel
// lets it, brings up lo, and with Network listens on ProxyAddr and bridges
// each connection to Spec.EgressSocket (a filesystem socket is reachable
// across network namespaces; stage 1 holds it by a descriptor opened before
// the view hid it). It starts stage 2 in a new session inside the server's
// cgroup, reaps orphans, forwards signals, and exits with the server's
// status; its exit makes the kernel kill everything left in the namespace,
// so no grandchild outlives the server.
//
// Stage 2 locks its OS thread (every restriction below is per thread, and
// this thread calls execve), builds the Landlock ruleset, marks every
// descriptor above stderr close-on-exec, sets the rlimits, sets
// no_new_privs, empties the
// bounding and ambient capability sets and locks SECBIT_NOROOT (the server
// is uid 0 inside its user namespace and must not regain capabilities at
// execve), enforces Landlock, clears its remaining capabilities, installs the
// seccomp filter and executes the server.
//
// Two re-executions instead of one: a Go program cannot run code between
// fork and exec, and stage 1 must stay outside the restrictions (it mounts
// /proc and dials the egress socket) while the server must be inside them.
//
// # The filesystem view
//
// Landlock mediates opening, creating, renaming, linking and executing, not
// metadata: alone, it leaves every host path stat-able, readlink-able and
// watchable (inotify), and every file the uid owns open to chmod, chown,
// utimensat and xattrs. So nothing outside the grants exists for the
// server (view_linux.go): stage 1 opens each grant (O_PATH) in the host's
// view, mounts a tmpfs as the new root, clones each grant's mount tree
// (open_tree, with submounts) onto its own path, sets its attributes on the
// whole tree (mount_setattr), mounts the fresh /proc, pivots into the new
// root, detaches the host's, and makes the root read-only. Attributes:
//
//   - runtime base and program (read and execute): read-only, nosuid, nodev;
//   - Spec.Read: read-only, nosuid, nodev, noexec;
//   - Spec.Write: writable, nosuid, nodev, noexec;
//   - Spec.Tmp: a tmpfs of its own (fsopen), writable, nosuid, nodev,
//     noexec, holding the host directory's subdirectories, of at most the
//     memory limit's size (its pages are charged to the memory cgroup), so
//     that the server cannot fill the host's disk through it;
//   - the device files: read-only mounts of the host's nodes (writing to
//     /dev/null needs no writable mount; chmod of it would).
//
// A grant given through a symlink is mounted where it resolves, with the
// symlink recreated at the given path. The working directory, when not
// granted, is an empty directory of the tmpfs. Nothing the server writes
// can be executed: noexec refuses execve and mmap(PROT_EXEC) of its files
// (so "ld.so FILE" fails too), memfds are sealed non-executable
// (vm.memfd_noexec=2 in the pid namespace, which only the host's root may
// set; otherwise seccomp refuses memfd_create without MFD_NOEXEC_SEAL), and
// seccomp refuses the setuid and setgid bits (the server owns what it
// creates, and nosuid holds only inside the sandbox). Code the server
// loads into memory itself stays allowed, anonymous or from a memfd mapped
// executable (ld.so /proc/self/fd/N): JIT compilers need it, and it runs
// with the server's own restrictions.
//
// # Landlock
//
// The ruleset handles every access right of the running kernel's ABI (not
// best effort: ABI 3, Linux 6.2, is the minimum, as the first to restrict
// truncate). Grants:
//
//   - the runtime base (see below), read, and execute where noted;
//   - Spec.Read: read files and list directories, no execute;
//   - Spec.Write and Spec.Tmp: read, write, create, remove, rename and link
//     within them; no execute (nothing the server writes can be run), no
//     device nodes, no device ioctls;
//   - network (ABI 4+): TCP connect only to ProxyAddr when Network, none
//     otherwise; bind is not handled (harmless with only loopback);
//   - scoping (ABI 6+): no signals to, and no abstract unix sockets of,
//     processes outside the sandbox.
//
// A grant whose path resolves through a directory the server can write
// (checked name by name, following symlinks as the kernel does) is dropped:
// inside a write path it is redundant, and through one it may follow a
// symlink the server planted on an earlier run (W/docs -> ~/.ssh). The
// same holds for program files named by a path through a write path. The
// check runs in stage 2 just before the ruleset opens the paths; a sibling
// sandbox sharing the write path could still race it, so policies should
// not nest read paths inside write paths.
//
// Landlock's domain check also covers ptrace access, so the server can
// neither trace stage 1 nor read its /proc/1/environ.
//
// # The runtime base
//
// What any Node, Python or Go server needs to start, and nothing of the
// user's:
//
//   - /usr /lib /lib32 /lib64 /libx32 /bin /sbin: read and execute;
//   - selected /etc files for the loader, users, name resolution, time zones
//     and TLS (ld.so.cache, passwd, group, nsswitch.conf, hosts,
//     resolv.conf, ssl/, pki/, ca-certificates/ …), never /etc as a whole
//     (/etc/shadow, ssh host keys);
//   - /dev/null, zero, full, random, urandom: read and write, nothing else in
//     /dev (no terminal);
//   - /proc, read: the sandbox's own procfs;
//   - the program: the executable, the interpreter of a "#!" script (with
//     "#!/usr/bin/env NAME" looked up in the server's PATH) and the first
//     argument naming an existing file (node server.js), each resolved
//     through symlinks, read and execute. A file under a node_modules
//     directory brings the outermost node_modules above it (npm and npx
//     hoist the package's dependencies there); a file in VENV/bin where
//     VENV/pyvenv.cfg exists brings VENV. A directory that would cover a
//     protected path (a venv in $HOME itself) shrinks to the file. Anything
//     else, such as a project directory, goes in filesystem.read.
//
// # Seccomp
//
// The filter (seccomp_linux.go) kills the process on any non-native syscall
// ABI (i386 int 0x80, x32), refuses with EPERM: sockets other than TCP over
// IPv4/IPv6 and NETLINK_ROUTE (so no UDP, raw, packet, Multipath TCP, and no
// AF_UNIX: Landlock before ABI 9 does not restrict connecting to the host's
// ssh-agent or docker sockets), clone with namespace flags, unshare, setns,
// mount and the new mount API, chroot, pivot_root, ptrace,
// process_vm_readv/writev, pidfd_getfd, kcmp, bpf, perf_event_open,
// userfaultfd, keyctl, add_key, request_key, kexec, module loading,
// open_by_handle_at, io_uring (its operations bypass these checks), clock
// and swap and reboot calls, memfd_secret, and the TIOCSTI and TIOCLINUX
// ioctls; the setuid and setgid bits in chmod, open, creat and mknod
// (openat2 fails with ENOSYS: its mode is out of a filter's reach);
// prlimit on any process but the caller; socketpair only for SOCK_STREAM
// and SOCK_SEQPACKET (a datagram end,
// disconnected, could send to any unix socket address); clone3 fails with
// ENOSYS (its flags are out of a filter's reach; libc and Go fall back to
// clone).
//
// # Resource limits
//
// Spec.Limits (the sandbox block's limits, with policy.DefaultLimits where
// unset) bound the server (limits_linux.go): with a cgroup (NewCgroup: v2
// where mcpform's cgroup delegates pids and memory, v1 where those
// hierarchies are writable) processes and memory for the whole tree; always
// rlimits for open files, file size, core dumps (none), processes (which the
// kernel does not apply to the host's root) and, without a memory cgroup,
// each process's private memory (RLIMIT_DATA counts no shared mapping).
// ${TMP} is a tmpfs of at most the memory limit. Stage 1, outside the
// cgroup, bounds itself: at most 256 bridged connections, its own soft
// descriptor limit. LimitsInForce says which holds on this machine.
//
// # Limits
//
// The parent-death signal belongs to the OS thread that started stage 1:
// start sandboxed commands from ordinary goroutines, not from one that locks
// its thread and then exits. Command refuses SysProcAttr and ExtraFiles.
// go-landlock links kernel.org/.../libcap/psx, which with cgo wraps
// pthread_create; the sandbox never uses its all-threads calls (stage 2
// restricts one thread and executes), so building with -tags landlocktsync,
// which drops psx, is safe. No
// switch weakens the sandbox; if one is ever added its name must contain
// "Insecure".
package sandbox
