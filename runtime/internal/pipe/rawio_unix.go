//go:build unix

package pipe

import (
	"io"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// rawPipe is a non-blocking pipe whose reads and writes are raw system
// calls, with the poller's wait when the pipe is empty or full.
//
// A system call through the syscall package tells the scheduler that it
// may block, and the first one after the process was idle wakes the
// runtime's monitor thread, which then polls every 20 µs while the proxy
// works: two or three extra context switches per message, most of what the
// proxy added to a call on a 2-core VM. A read or write of a non-blocking
// pipe never blocks, so it needs none of that.
//
// It holds the file rather than embedding it: os.File's Fd puts the file
// back in blocking mode, and a raw read of a blocking pipe would hold the
// run's one processor.
type rawPipe struct {
	f    *os.File
	rc   syscall.RawConn
	spin *spinner // nil: park at once when empty
	spinState
}

func (p *rawPipe) Close() error {
	p.closed.Store(true)
	return p.f.Close()
}

func (p *rawPipe) SetReadDeadline(t time.Time) error {
	p.setDeadline(t)
	return p.f.SetReadDeadline(t)
}

func (p *rawPipe) SetWriteDeadline(t time.Time) error { return p.f.SetWriteDeadline(t) }

// Raw returns f as a rawPipe when it is a non-blocking pipe or socket
// (what os.Pipe and Pollable return); anything else as it is.
func Raw[T any](f T) T {
	file, ok := any(f).(*os.File)
	if !ok {
		return f
	}
	rc, err := file.SyscallConn()
	if err != nil {
		return f
	}
	nonblocking := false
	_ = rc.Control(func(fd uintptr) {
		flags, _, errno := syscall.RawSyscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		nonblocking = errno == 0 && flags&syscall.O_NONBLOCK != 0
	})
	if !nonblocking {
		return f
	}
	if p, ok := any(&rawPipe{f: file, rc: rc}).(T); ok {
		return p
	}
	return f
}

func (p *rawPipe) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	spun, parked := p.spin == nil, false
	err := p.rc.Read(func(fd uintptr) bool {
		if parked {
			p.awake = time.Now()
		}
		for {
			r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
			if e == syscall.EINTR {
				continue
			}
			n, errno = int(r), e
			if e != syscall.EAGAIN {
				return true
			}
			if spun || !p.spin.wait(int32(fd), &p.spinState) {
				parked = true
				return false
			}
			spun = true
		}
	})
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, &os.PathError{Op: "read", Path: p.f.Name(), Err: errno}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (p *rawPipe) Write(b []byte) (int, error) { return p.write(b, true) }

// tryWrite writes what the pipe takes now, without waiting for room: n <
// len(b) with a nil error means the pipe is full.
func (p *rawPipe) tryWrite(b []byte) (int, error) { return p.write(b, false) }

func (p *rawPipe) write(b []byte, wait bool) (int, error) {
	written := 0
	var errno syscall.Errno
	err := p.rc.Write(func(fd uintptr) bool {
		for written < len(b) {
			rest := b[written:]
			r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&rest[0])), uintptr(len(rest)))
			switch e {
			case 0:
				written += int(r)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return !wait // full: wait until the reader made room, or leave the rest
			default:
				errno = e
				return true
			}
		}
		return true
	})
	switch {
	case err != nil:
		return written, err
	case errno != 0:
		return written, &os.PathError{Op: "write", Path: p.f.Name(), Err: errno}
	}
	return written, nil
}
