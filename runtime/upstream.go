package runtime

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

// upstream is the proxy's connection to the server. Unlike mcp.Conn it is
// built for a hostile peer that must not take the client down with it:
// garbage and over-size lines are dropped (and reported) instead of ending
// the connection; responses to unknown or already answered ids are dropped;
// writes go through one bounded queue, so a server that stops reading makes
// requests fail after WriteTimeout instead of blocking their goroutines
// forever.
type upstream struct {
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

	// Set before listen; called on the reading goroutine, which holds out
	// (the client's stream) while it handles a burst of messages.
	out            *pipe.Writer
	idle           func() // before the reader waits for more
	onNotification func(*mcp.Message)
	onRequest      func(*mcp.Message)
	warn           func(format string, args ...any)
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
	u    *upstream
	id   mcp.ID
	call *callCtx
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

func newUpstream(w io.Writer, writeTimeout time.Duration) *upstream {
	u := &upstream{
		pending: map[mcp.ID]*pending{},
		tokens:  map[string]*pending{},
		done:    make(chan struct{}),
	}
	u.lw = pipe.NewWriter(w, backlogLimit, true, writeTimeout, func(err error) {
		var af *auditFailure
		if errors.As(err, &af) {
			u.fail(af)
			return
		}
		u.fail(fmt.Errorf("%w: writing to the server: %v", mcp.ErrServerClosed, err))
	})
	return u
}

// listen runs the reader of r (the server's stdout).
func (u *upstream) listen(r io.Reader, maxLine int) {
	go u.readLoop(r, maxLine)
}

// Done is closed when the connection ended: the server's output ended, a
// write to it failed, or the audit log did (fail); Err says why.
func (u *upstream) Done() <-chan struct{} { return u.done }

func (u *upstream) Err() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.err
}

// fail ends the connection: every request still waiting gets err.
func (u *upstream) fail(err error) {
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
func (u *upstream) send(b *[]byte) error {
	err := u.lw.WriteLine(*b)
	pipe.PutLine(b)
	return err
}

// notify sends a notification upstream.
func (u *upstream) notify(method string, params []byte) error {
	b := pipe.GetLine()
	*b = appendRequest(*b, "", method, params)
	return u.send(b)
}

// respond sends a response upstream (to a server→client request).
func (u *upstream) respond(id mcp.ID, result []byte, rpcErr *mcp.RPCError) error {
	b := pipe.GetLine()
	if rpcErr != nil {
		*b = appendError(*b, id, rpcErr.Code, rpcErr.Message, rpcErr.Data)
	} else {
		*b = appendResponse(*b, id, result)
	}
	return u.send(b)
}

// request sends a request under the proxy's next id and returns at once; done
// is called exactly once, with the server's answer (on the reading
// goroutine, so a response needs no hand-off to reach the client), or with
// an error: ctx's when it ends first (the server is then told with
// notifications/cancelled), a *timeoutError after timeout, or why the
// server is gone. token is the request's progress token (raw JSON) or "".
func (u *upstream) request(ctx context.Context, method string, params []byte, token string, forward bool, timeout time.Duration, done func(*mcp.Message, error)) {
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
	*b = appendRequest(*b, id, method, params)
	c, own := ctx.(*callCtx)
	var err error
	if own && c.on.Load() == onClientReader {
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
func (u *upstream) arm(at time.Time) {
	u.timerAt = at
	if u.timer == nil {
		u.timer = time.AfterFunc(time.Until(at), u.expire)
	} else {
		u.timer.Reset(time.Until(at))
	}
}

// expire answers every request past its deadline with a *timeoutError
// (the server is told to drop it) and re-arms the timer for the next.
func (u *upstream) expire() {
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
		e.p.done(nil, &timeoutError{e.p.method, e.p.timeout})
	}
}

// claim takes p, pending under id, out of the table and stops its watches;
// it reports false when another path claimed it first.
func (u *upstream) claim(id mcp.ID, p *pending) bool {
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

// call is request for a caller that can wait: it returns the answer.
func (u *upstream) call(ctx context.Context, method string, params []byte, timeout time.Duration) (*mcp.Message, error) {
	type answer struct {
		m   *mcp.Message
		err error
	}
	ch := make(chan answer, 1)
	u.request(ctx, method, params, "", false, timeout, func(m *mcp.Message, err error) { ch <- answer{m, err} })
	a := <-ch
	return a.m, a.err
}

type timeoutError struct {
	method  string
	timeout time.Duration
}

func (e *timeoutError) Error() string {
	return fmt.Sprintf("the server did not answer %s within %v", e.method, e.timeout)
}

func (u *upstream) cancel(id mcp.ID, reason string) {
	params := []byte(`{"requestId":` + id.String() + `,"reason":`)
	params = append(mcp.AppendQuoted(params, reason), '}')
	_ = u.notify("notifications/cancelled", params)
}

// progressTarget reports whether a progress notification's token belongs
// to a pending client request.
func (u *upstream) progressTarget(token []byte) bool {
	u.mu.Lock()
	p, ok := u.tokens[string(token)]
	u.mu.Unlock()
	return ok && p.forward
}

func (u *upstream) readLoop(r io.Reader, maxLine int) {
	rd := mcp.NewReader(r, maxLine)
	for {
		if !rd.Buffered() {
			_ = u.out.Release()
			if u.idle != nil {
				u.idle()
			}
		}
		line, err := rd.ReadLine()
		u.out.Hold()
		if err != nil {
			_ = u.out.Release()
			var tooLong *mcp.LineTooLongError
			if errors.As(err, &tooLong) {
				u.warn("dropped a message from the server: %v", err)
				continue
			}
			if errors.Is(err, io.EOF) {
				u.fail(mcp.ErrServerClosed)
			} else {
				u.fail(fmt.Errorf("reading from the server: %w", err))
			}
			return
		}
		u.handle(line)
	}
}

// handle handles one line from the server.
func (u *upstream) handle(line []byte) {
	msg, err := mcp.DecodeMessage(line)
	if err != nil {
		u.warn("dropped a message from the server: %v: %s", err, clipBytes(line))
		return
	}
	switch {
	case msg.IsResponse():
		u.deliver(msg)
	case msg.IsNotification():
		u.onNotification(msg)
	default:
		u.onRequest(msg)
	}
}

func (u *upstream) deliver(msg *mcp.Message) {
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
		u.warn("dropped a response from the server to id %s, which is not waiting for an answer (unknown, answered or cancelled)", clipBytes([]byte(msg.ID.String())))
		return
	}
	p.release()
	if p.call != nil {
		p.call.on.Store(onServerReader)
		defer p.call.on.Store(0)
	}
	p.done(msg, nil)
}

// caller is an mcp.Caller over this connection for the proxy's own requests
// (verification listings), with params wrapped by wrap.
func (u *upstream) caller(wrap func([]byte) []byte, timeout time.Duration) mcp.Caller {
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
