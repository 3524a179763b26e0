//go:build linux

package sandbox

// x32SyscallBit is unused on arm64, which has no x32.
const x32SyscallBit = 0x40000000

var archDeniedSyscalls []uintptr

// archModeSyscalls: arm64 has only the *at forms, in modeSyscalls.
var archModeSyscalls []modeSyscall
