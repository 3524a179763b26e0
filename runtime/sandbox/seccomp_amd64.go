//go:build linux

package sandbox

import "golang.org/x/sys/unix"

// x32SyscallBit marks a syscall of the x32 ABI, which shares AUDIT_ARCH_X86_64
// with the native one (asm/unistd.h __X32_SYSCALL_BIT).
const x32SyscallBit = 0x40000000

// archDeniedSyscalls exist only in the x86_64 table.
var archDeniedSyscalls = []uintptr{
	unix.SYS_IOPL, unix.SYS_IOPERM, unix.SYS_USELIB, unix.SYS__SYSCTL,
	unix.SYS_CREATE_MODULE, unix.SYS_GET_KERNEL_SYMS, unix.SYS_QUERY_MODULE,
}

// archModeSyscalls take a file mode and exist only in the x86_64 table.
var archModeSyscalls = []modeSyscall{
	{unix.SYS_OPEN, 2, 1},
	{unix.SYS_CREAT, 1, -1},
	{unix.SYS_CHMOD, 1, -1},
	{unix.SYS_MKNOD, 1, -1},
}
