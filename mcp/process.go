package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/mcpform/mcpform/internal/mutation"
)

// defaultStderrLimit is how much of a server's stderr a Process keeps: the
// last 64 KiB.
const defaultStderrLimit = 64 << 10

// defaultShutdownGrace is how long Close waits at each step of the shutdown
// (after closing stdin, after SIGTERM) before the next one.
const defaultShutdownGrace = 2 * time.Second

// A Process is a running server: its stdin and stdout carry the protocol,
// its stderr is kept (the last defaultStderrLimit bytes) for error messages.
type Process struct {
	Name   string
	Stdin  io.WriteCloser // the server's stdin; Close closes it first
	Stdout io.Reader      // the server's stdout; EOF once every writer is gone

	cmd     *exec.Cmd  // nil for a remote server
	remote  *httpLines // a remote server's connection (StartRemote)
	stderr  *ring
	errDone chan struct{} // stderr fully read
	exited  chan struct{} // the process has been reaped
	waitErr error
	cleanup func()

	closeOnce sync.Once
	grace     time.Duration

	// The names of the environment the server got and of those its spec
	// listed that were not set, for a StartError.
	env, unset []string
	command    []string
}

// Start starts spec.Command directly (no shell) in its own session and
// process group, with an environment holding only the variables named in
// spec.Env and no descriptor but 0, 1 and 2, and begins capturing its
// stderr. When ctx is done the process is shut down as Close does. Once the
// server exits, every process it left behind is killed (endTree).
func Start(ctx context.Context, spec ServerSpec) (*Process, error) {
	if len(spec.Command) == 0 || spec.Command[0] == "" {
		return nil, errors.New("no command to start")
	}
	lookup := spec.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	// A non-nil, possibly empty slice: nil would hand the server all of
	// mcpform's environment.
	env := make([]string, 0, len(spec.Env))
	if mutation.Off("envwithheld") {
		env = nil // all of mcpform's environment
	}
	var got, unset []string
	for _, name := range spec.Env {
		if v, ok := lookup(name); ok {
			env = append(env, name+"="+v)
			got = append(got, name)
		} else {
			unset = append(unset, name)
		}
	}
	notRun := func(err error) error {
		return &StartError{Server: spec.Name, Stage: "start", Err: fmt.Errorf("starting %q: %w", spec.Command[0], err),
			Env: got, Unset: unset, Command: spec.Command}
	}
	cmd := exec.Command(spec.Command[0], spec.Command[1:]...)
	if cmd.Err != nil {
		return nil, notRun(cmd.Err)
	}
	cmd.Dir = spec.Dir
	cmd.Env = env
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		return nil, err
	}
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		stdoutR.Close()
		stdoutW.Close()
		return nil, err
	}
	// Our own pipes rather than cmd.StdoutPipe: Wait must not close stdout
	// under a reader that has not yet seen the last message.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderrW
	closeChildEnds := func() { stdinR.Close(); stdoutW.Close(); stderrW.Close() }
	closeAll := func() { closeChildEnds(); stdinW.Close(); stdoutR.Close(); stderrR.Close() }

	var cleanup func()
	if spec.Prepare != nil {
		cleanup, err = spec.Prepare(cmd)
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("preparing %q: %w", spec.Command[0], err)
		}
	}
	// After Prepare: the sandbox builds its own SysProcAttr (namespaces,
	// id maps), and the server still gets a session of its own.
	setSession(cmd)
	closeOnExecAbove2()
	startServer(func() int {
		if err = cmd.Start(); err != nil {
			return 0
		}
		return cmd.Process.Pid
	})
	if err != nil {
		closeAll()
		if cleanup != nil {
			cleanup()
		}
		return nil, notRun(err)
	}
	closeChildEnds()

	grace := spec.ShutdownGrace
	if grace <= 0 {
		grace = defaultShutdownGrace
	}
	p := &Process{
		Name:    spec.Name,
		Stdin:   stdinW,
		Stdout:  stdoutR,
		cmd:     cmd,
		stderr:  newRing(defaultStderrLimit),
		errDone: make(chan struct{}),
		exited:  make(chan struct{}),
		cleanup: cleanup,
		grace:   grace,
		env:     got,
		unset:   unset,
		command: spec.Command,
	}
	go func() {
		defer close(p.errDone)
		defer stderrR.Close()
		var w io.Writer = p.stderr
		if spec.Stderr != nil {
			w = io.MultiWriter(p.stderr, passthrough{spec.Stderr})
		}
		io.Copy(w, stderrR)
	}()
	go func() {
		p.waitErr = cmd.Wait()
		// What the server started ends with it, now rather than when the
		// client leaves: a descendant holding the server's stdout would
		// keep its in-flight calls waiting for an end of output.
		if !mutation.Off("reaptree") {
			endTree(cmd.Process.Pid, grace)
		}
		close(p.exited)
	}()
	if ctx.Done() != nil {
		go func() {
			select {
			case <-ctx.Done():
				p.Close()
			case <-p.exited:
			}
		}()
	}
	return p, nil
}

// passthrough keeps copying into the ring when the passthrough writer fails.
type passthrough struct{ w io.Writer }

func (p passthrough) Write(b []byte) (int, error) {
	p.w.Write(b)
	return len(b), nil
}

// Pid returns the server's process id (also its process group id).
func (p *Process) Pid() int {
	if p.cmd == nil {
		return 0 // a remote server
	}
	return p.cmd.Process.Pid
}

// Exited returns a channel closed once the server process has exited and
// what it left behind has been killed.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Wait waits for the server to exit and returns its exit status as
// exec.Cmd.Wait does.
func (p *Process) Wait() error {
	<-p.exited
	return p.waitErr
}

// StartError returns a *StartError for this server, which did not answer
// stage: exited says it exited (or closed its output) first, and err is
// the underlying error. It waits for the server's exit status only when
// the server exited.
func (p *Process) StartError(stage string, exited bool, err error) *StartError {
	se := &StartError{Server: p.Name, Stage: stage, Exited: exited, Err: err,
		Env: p.env, Unset: p.unset, Command: p.command}
	if exited {
		if status := p.Close(); status != nil {
			se.Status = status.Error()
		} else {
			se.Status = "exit status 0"
		}
	}
	se.Stderr = p.StderrTail()
	return se
}

// StderrTail returns the last bytes (up to 64 KiB) the server wrote to
// stderr, as written: escape it before showing it.
func (p *Process) StderrTail() string { return p.stderr.String() }

// Close shuts the server down as the stdio transport says: "Closing the
// input stream to the child process (the server). Waiting for the server to
// exit. If the server does not exit within a reasonable time", SIGTERM the
// process group, wait again, then SIGKILL the group. Whatever is left of
// the group after the server exited is killed too. Close waits for stderr
// to be read to its end (briefly), so StderrTail is complete afterwards. It
// returns the server's exit status; calling it again returns the same.
func (p *Process) Close() error {
	if p.cmd == nil {
		p.closeOnce.Do(func() {
			p.Stdin.Close() // the session ends (StartRemote)
			if !p.waitFor(p.grace) && p.remote != nil {
				p.remote.cancel()
			}
			<-p.exited
		})
		return nil
	}
	p.closeOnce.Do(func() {
		p.Stdin.Close()
		if !p.waitFor(p.grace) {
			signalGroup(p.cmd, syscall.SIGTERM)
			if !p.waitFor(p.grace) {
				signalGroup(p.cmd, syscall.SIGKILL)
				<-p.exited
			}
		}
		// Children the server left behind in its group would keep stderr
		// (and the sandbox) alive.
		signalGroup(p.cmd, syscall.SIGKILL)
		select {
		case <-p.errDone:
		case <-time.After(p.grace):
		}
		if c, ok := p.Stdout.(io.Closer); ok {
			c.Close()
		}
		if p.cleanup != nil {
			p.cleanup()
		}
	})
	<-p.exited
	return p.waitErr
}

func (p *Process) waitFor(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// ring keeps the last n bytes written to it.
type ring struct {
	mu   sync.Mutex
	buf  []byte
	n    int
	full bool
	pos  int
}

func newRing(n int) *ring { return &ring{buf: make([]byte, 0, n), n: n} }

func (r *ring) Write(b []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	written := len(b)
	if len(b) >= r.n {
		b = b[len(b)-r.n:]
		r.buf = append(r.buf[:0], b...)
		r.full, r.pos = true, 0
		return written, nil
	}
	if !r.full {
		if len(r.buf)+len(b) <= r.n {
			r.buf = append(r.buf, b...)
			return written, nil
		}
		k := r.n - len(r.buf)
		r.buf = append(r.buf, b[:k]...)
		b = b[k:]
		r.full, r.pos = true, 0
	}
	for len(b) > 0 {
		k := copy(r.buf[r.pos:], b)
		b = b[k:]
		r.pos = (r.pos + k) % r.n
	}
	return written, nil
}

func (r *ring) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.full {
		return string(r.buf)
	}
	return string(r.buf[r.pos:]) + string(r.buf[:r.pos])
}
