//go:build linux && !amd64 && !arm64

package sandbox

// Other architectures have no filter (auditArch has no entry, so Supported
// refuses them); these keep the package compiling there.
const x32SyscallBit = 0x40000000

var archDeniedSyscalls []uintptr
var archModeSyscalls []modeSyscall
