// Package procfd lists the file descriptors this process would pass to a
// program it executes: those above 2 without close-on-exec. It is the one
// walk of a descriptor directory (/proc/self/fd on Linux, /dev/fd on macOS
// and the BSDs) that mcp, which marks them close-on-exec before it starts
// a server, and internal/hostile, whose server reports and writes to the
// ones it inherited, share.
//
// Go opens every descriptor close-on-exec, so what it finds was made some
// other way (a raw dup) or inherited without the flag. Where descriptors
// are not inherited by number (Windows) it has nothing to list and reports
// errors.ErrUnsupported.
package procfd
