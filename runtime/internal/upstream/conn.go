package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/mcpform/mcpform/mcp"
	"github.com/mcpform/mcpform/runtime/internal/pipe"
)

// Conn is the proxy's connection to the server. Unlike the probe's (package
// mcp), which ends at the first protocol error since a probe that met one
// has its answer, it is built for a hostile peer that must not take the
// client down with it:
// garbage and over-size lines are dropped (and reported) instead of ending
// the connection; responses to unknown or already answered ids are dropped;
// writes go through one bounded queue, so a server that stops reading makes
// requests fail after WriteTimeout instead of blocking their goroutines
// forever.
type Conn struct {
	lw *pipe.Writer

	mu      sync.Mutex
	next    int64
	pending map[mcp.ID]*pending
	tokens  map[string]*pending // progress tokens of pending requests
	done    chan struct{}
	err     error

	// One timer serves every deadline: it is armed for the earliest, and
	// is not stopped when that request is answered, so that a request
	// costs no timer operation (arming a timer wakes the goroutine that
	// polls the pipes); it re-arms itself when it fires.
	timer   *time.Timer
	timerAt time.Time // when the timer fires; zero when it is not armed

	h Hooks
}

// Hooks are what the proxy gives a connection. All but Before are called
// on the goroutine that reads the server, in stream order; that goroutine
// holds Out (the client's stream) while it handles a burst of messages.
type Hooks struct {
	// Before runs ahead of every write to the server (the audit log's
	// commit); its error ends the connection with that error as it is.
	Before func() error
	Out    *pipe.Writer
	// Idle runs before the reader waits for more.
	Idle           func()
	OnNotification func(*mcp.Message)
	OnRequest      func(*mcp.Message)
	Warn           func(format string, args ...any)
}

// pending is one request the proxy sent and waits on. Exactly one of the
// reader (the answer), the request's context (cancelled), its timer and fail
// (the server is gone) claims it, by taking it out of the table, and calls
// done.
type pending struct {
	done  func(*mcp.Message, error)
	token string // the progress token, as raw JSON, or ""
	// forward is set for client requests: their progress notifications
	// are passed on.
	forward bool
	stop    func() bool // ends the context watch

	method   string
	timeout  time.Duration
	deadline time.Time // zero: none

	// For a client request: the connection and id, for cancelled.
	u    *Conn
	id   mcp.ID
	call *Call
}

// cancelled is a client request whose context was cancelled: the server is
// told, and done gets the context's error.
func (p *pending) cancelled() {
	if p.u.claim(p.id, p) {
		p.u.cancel(p.id, "the client cancelled the request")
		p.done(nil, context.Canceled)
	}
}

// backlogLimit bounds what may wait for a server that reads slowly.
const backlogLimit = 4 << 20

// New returns the connection to a server that reads w; Listen starts
// reading its answers. A write that waits for the server longer than
// writeTimeout ends the connection.
func New(w io.Writer, writeTimeout time.Duration, h Hooks) *Conn {
	u := &Conn{
		pending: map[mcp.ID]*pending{},
		tokens:  map[string]*pending{},
		done:    make(chan struct{}),
		h:       h,
	}
	u.lw = pipe.NewWriter(w, backlogLimit, true, writeTimeout, func(err error) {
		var be *beforeError
		if errors.As(err, &be) {
			u.Fail(be.err)
			return
		}
		u.Fail(fmt.Errorf("%w: writing to the server: %v", mcp.ErrServerClosed, err))
	})
	if h.Before != nil {
		u.lw.Before = func() error {
			if err := h.Before(); err != nil {
				return &beforeError{err}
			}
			return nil
		}
	}
	return u
}

// beforeError is the Before hook's error, told apart from a failed write.
type beforeError struct{ err error }

func (e *beforeError) Error() string { return e.err.Error() }

// Hold keeps the lines the client's reader queues (QueueLine, through
// Request on a Call it runs) until Release: a burst of requests costs one
// write.
func (u *Conn) Hold() { u.lw.Hold() }

// Release writes what Hold kept back.
func (u *Conn) Release() error { return u.lw.Release() }

// Flushed waits until every line handed to the stream is written (or the
// stream failed), at most timeout; it reports whether they were.
func (u *Conn) Flushed(timeout time.Duration) bool { return u.lw.Flushed(timeout) }

// Listen runs the reader of r (the server's stdout).
func (u *Conn) Listen(r io.Reader, maxLine int) {
	go u.readLoop(r, maxLine)
}

// Done is closed when the connection ended: the server's output ended, a
// write to it failed, or the audit log did (fail); Err says why.
func (u *Conn) Done() <-chan struct{} { return u.done }

func (u *Conn) Err() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.err
}

// Fail ends the connection: every request still waiting gets err.
func (u *Conn) Fail(err error) {
	u.mu.Lock()
	if u.err != nil {
		u.mu.Unlock()
		return
	}
	u.err = err
	close(u.done)
	if u.timer != nil {
		u.timer.Stop()
	}
	waiting := u.pending
	u.pending = map[mcp.ID]*pending{}
	clear(u.tokens)
	u.mu.Unlock()
	for _, p := range waiting {
		p.release()
		p.done(nil, err)
	}
}

// send writes one line (with its newline) to the server. It owns b.
func (u *Conn) send(b *[]byte) error {
	err := u.lw.WriteLine(*b)
	pipe.PutLine(b)
	return err
}

// Notify sends a notification upstream.
func (u *Conn) Notify(method string, params []byte) error {
	b := pipe.GetLine()
	*b = mcp.AppendRequest(*b, "", method, params)
	return u.send(b)
}

// Respond sends a response upstream (to a server→client request).
func (u *Conn) Respond(id mcp.ID, result []byte, rpcErr *mcp.RPCError) error {
	b := pipe.GetLine()
	if rpcErr != nil {
		*b = mcp.AppendError(*b, id, rpcErr.Code, rpcErr.Message, rpcErr.Data)
	} else {
		*b = mcp.AppendResponse(*b, id, result)
	}
	return u.send(b)
}

// Request sends a request under the proxy's next id and returns at once; done
// is called exactly once, with the server's answer (on the reading
// goroutine, so a response needs no hand-off to reach the client), or with
// an error: ctx's when it ends first (the server is then told with
// notifications/cancelled), a *TimeoutError after timeout, or why the
// server is gone. token is the request's progress token (raw JSON) or "".
func (u *Conn) Request(ctx context.Context, method string, params []byte, token string, forward bool, timeout time.Duration, done func(*mcp.Message, error)) {
	p := &pending{done: done, token: token, forward: forward, method: method, timeout: timeout}
	u.mu.Lock()
	if u.err != nil {
		err := u.err
		u.mu.Unlock()
		done(nil, err)
		return
	}
	if token != "" {
		if _, taken := u.tokens[token]; taken {
			u.mu.Unlock()
			done(nil, errors.New("the progress token is already in use by another request"))
			return
		}
		u.tokens[token] = p
	}
	u.next++
	id := mcp.IntID(u.next)
	u.pending[id] = p
	if timeout > 0 {
		p.deadline = time.Now().Add(timeout)
		if u.timerAt.IsZero() || p.deadline.Before(u.timerAt) {
			u.arm(p.deadline)
		}
	}
	u.mu.Unlock()

	b := pipe.GetLine()
	*b = mcp.AppendRequest(*b, id, method, params)
	c, own := ctx.(*Call)
	var err error
	if own && c.On.Load() == OnClientReader {
		// Sent by the client's reader, which releases the stream before
		// it waits for more.
		err = u.lw.QueueLine(*b)
		pipe.PutLine(b)
	} else {
		err = u.send(b)
	}
	if err != nil {
		if u.claim(id, p) {
			done(nil, err)
		}
		return
	}
	// Watched only once sent, so that the server never gets the
	// cancellation before the request.
	if own {
		u.mu.Lock()
		current := u.pending[id] == p
		if current {
			p.u, p.id, p.call = u, id, c
		}
		u.mu.Unlock()
		if current && !c.watch(p) {
			p.cancelled()
		}
		return
	}
	if ctx.Done() == nil {
		return
	}
	u.mu.Lock()
	if u.pending[id] == p {
		p.stop = context.AfterFunc(ctx, func() {
			if u.claim(id, p) {
				// The proxy's own requests end by their deadline, which
				// races the request's timer: the server is told the same
				// either way.
				reason := "the client cancelled the request"
				if errors.Is(ctx.Err(), context.DeadlineExceeded) {
					reason = "mcpform: no answer in time"
				}
				u.cancel(id, reason)
				done(nil, ctx.Err())
			}
		})
	}
	u.mu.Unlock()
}

// arm sets the timer to fire at at; under mu.
func (u *Conn) arm(at time.Time) {
	u.timerAt = at
	if u.timer == nil {
		u.timer = time.AfterFunc(time.Until(at), u.expire)
	} else {
		u.timer.Reset(time.Until(at))
	}
}

// expire answers every request past its deadline with a *TimeoutError
// (the server is told to drop it) and re-arms the timer for the next.
func (u *Conn) expire() {
	type expired struct {
		id mcp.ID
		p  *pending
	}
	var late []expired
	now := time.Now()
	u.mu.Lock()
	u.timerAt = time.Time{}
	var next time.Time
	for id, p := range u.pending {
		switch {
		case p.deadline.IsZero():
		case !p.deadline.After(now):
			late = append(late, expired{id, p})
		case next.IsZero() || p.deadline.Before(next):
			next = p.deadline
		}
	}
	for _, e := range late {
		delete(u.pending, e.id)
		if e.p.token != "" && u.tokens[e.p.token] == e.p {
			delete(u.tokens, e.p.token)
		}
	}
	if !next.IsZero() && u.err == nil {
		u.arm(next)
	}
	u.mu.Unlock()
	for _, e := range late {
		e.p.release()
		u.cancel(e.id, "mcpform: no answer in time")
		e.p.done(nil, &TimeoutError{e.p.method, e.p.timeout})
	}
}

// claim takes p, pending under id, out of the table and stops its watches;
// it reports false when another path claimed it first.
func (u *Conn) claim(id mcp.ID, p *pending) bool {
	u.mu.Lock()
	if u.pending[id] != p {
		u.mu.Unlock()
		return false
	}
	delete(u.pending, id)
	if p.token != "" && u.tokens[p.token] == p {
		delete(u.tokens, p.token)
	}
	u.mu.Unlock()
	p.release()
	return true
}

// release stops p's watches. p is out of the table, so its fields no longer
// change.
func (p *pending) release() {
	if p.call != nil {
		p.call.unwatch(p)
	}
	if p.stop != nil {
		p.stop()
	}
}

// call is Request for a caller that can wait: it returns the answer.
func (u *Conn) call(ctx context.Context, method string, params []byte, timeout time.Duration) (*mcp.Message, error) {
	type answer struct {
		m   *mcp.Message
		err error
	}
	ch := make(chan answer, 1)
	u.Request(ctx, method, params, "", false, timeout, func(m *mcp.Message, err error) { ch <- answer{m, err} })
	a := <-ch
	return a.m, a.err
}

type TimeoutError struct {
	method  string
	timeout time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("the server did not answer %s within %v", e.method, e.timeout)
}

func (u *Conn) cancel(id mcp.ID, reason string) {
	params := []byte(`{"requestId":` + id.String() + `,"reason":`)
	params = append(mcp.AppendQuoted(params, reason), '}')
	_ = u.Notify("notifications/cancelled", params)
}

// ProgressTarget reports whether a progress notification's token belongs
// to a pending client request.
func (u *Conn) ProgressTarget(token []byte) bool {
	u.mu.Lock()
	p, ok := u.tokens[string(token)]
	u.mu.Unlock()
	return ok && p.forward
}

func (u *Conn) readLoop(r io.Reader, maxLine int) {
	rd := mcp.NewReader(r, maxLine)
	for {
		if !rd.Buffered() {
			_ = u.h.Out.Release()
			if u.h.Idle != nil {
				u.h.Idle()
			}
		}
		line, err := rd.ReadLine()
		u.h.Out.Hold()
		if err != nil {
			_ = u.h.Out.Release()
			var tooLong *mcp.LineTooLongError
			if errors.As(err, &tooLong) {
				u.h.Warn("dropped a message from the server: %v", err)
				u.dropped(tooLong.Head, tooLong.Tail, err)
				continue
			}
			if errors.Is(err, io.EOF) {
				u.Fail(mcp.ErrServerClosed)
			} else {
				u.Fail(fmt.Errorf("reading from the server: %w", err))
			}
			return
		}
		u.Handle(line)
	}
}

// Handle handles one line from the server, as the reader does: for a
// caller that reads the lines itself.
func (u *Conn) Handle(line []byte) {
	msg, err := mcp.DecodeMessage(line)
	if err != nil {
		u.h.Warn("dropped a message from the server: %v: %s", err, clipBytes(line))
		u.dropped(line, line, err)
		return
	}
	switch {
	case msg.IsResponse():
		u.deliver(msg)
	case msg.IsNotification():
		u.h.OnNotification(msg)
	default:
		u.h.OnRequest(msg)
	}
}

// dropped answers at once the requests a refused line was the answer to
// (mcp.AnswerIDs reads their ids from its head and tail without trusting
// it), instead of leaving them to their timeout: a server whose answers
// are broken fails its calls now.
func (u *Conn) dropped(head, tail []byte, why error) {
	for _, id := range mcp.AnswerIDs(head, tail) {
		u.mu.Lock()
		p := u.pending[id]
		u.mu.Unlock()
		if p != nil && u.claim(id, p) {
			p.done(nil, &DroppedError{Err: why})
		}
	}
}

// DroppedError is a request whose answer the connection refused: Err says
// why (too long, not strict JSON, a batch, nested too deep).
type DroppedError struct{ Err error }

func (e *DroppedError) Error() string {
	return fmt.Sprintf("mcpform refused the server's answer: %v", e.Err)
}

func (e *DroppedError) Unwrap() error { return e.Err }

func (u *Conn) deliver(msg *mcp.Message) {
	u.mu.Lock()
	p, ok := u.pending[msg.ID]
	if ok {
		delete(u.pending, msg.ID)
		if p.token != "" && u.tokens[p.token] == p {
			delete(u.tokens, p.token)
		}
	}
	u.mu.Unlock()
	if !ok {
		u.h.Warn("dropped a response from the server to id %s, which is not waiting for an answer (unknown, answered or cancelled)", clipBytes([]byte(msg.ID.String())))
		return
	}
	p.release()
	if p.call != nil {
		p.call.On.Store(OnServerReader)
		defer p.call.On.Store(0)
	}
	p.done(msg, nil)
}

// Caller is an mcp.Caller over this connection for the proxy's own requests
// (verification listings), with params wrapped by wrap.
func (u *Conn) Caller(wrap func([]byte) []byte, timeout time.Duration) mcp.Caller {
	return func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		m, err := u.call(ctx, method, wrap(params), timeout)
		if err != nil {
			return nil, err
		}
		if m.Error != nil {
			return nil, m.Error
		}
		return m.Result, nil
	}
}

// clipBytes returns the start of b for a log line, escaped by the caller's
// logger.
func clipBytes(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "… (" + strconv.Itoa(len(b)) + " bytes)"
	}
	return string(b)
}
