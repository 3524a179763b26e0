// Package sandbox confines a server process on Linux: user, mount, pid and
// network namespaces, Landlock for the filesystem, and a seccomp filter. It
// fails closed: without kernel support a sandboxed server does not start.
package sandbox
