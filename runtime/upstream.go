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
)

// upstream is the proxy's connection to the server. Unlike mcp.Conn it is
// built for a hostile peer that must not take the client down with it:
// garbage and over-size lines are dropped (and reported) instead of ending
// the connection; responses to unknown or already answered ids are dropped;
// writes go through one bounded queue, so a server that stops reading makes
// requests fail after WriteTimeout instead of blocking their goroutines
// forever.
type upstream struct {
	lw *lineWriter

	mu      sync.Mutex
	next    int64
	pending map[mcp.ID]*pending
	tokens  map[string]*pending // progress tokens of pending requests
	done    chan struct{}
	err     error

	// Set before start; called on the reading goroutine.
	onNotification func(*mcp.Message)
	onRequest      func(*mcp.Message)
	warn           func(format string, args ...any)
}

// pending is one request the proxy sent and waits on.
type pending struct {
	ch    chan *mcp.Message // buffered: the reader never blocks on it
	token string            // the progress token, as raw JSON, or ""
	// forward is set for client requests: their progress notifications
	// are passed on.
	forward bool
}

// backlogLimit bounds what may wait for a server that reads slowly.
const backlogLimit = 4 << 20

func newUpstream(w io.Writer, writeTimeout time.Duration) *upstream {
	u := &upstream{
		pending: map[mcp.ID]*pending{},
		tokens:  map[string]*pending{},
		done:    make(chan struct{}),
	}
	u.lw = newLineWriter(w, backlogLimit, true, writeTimeout, func(err error) {
		u.fail(fmt.Errorf("%w: writing to the server: %v", mcp.ErrServerClosed, err))
	})
	return u
}

var linePool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

func getBuf() *[]byte { return linePool.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if cap(*b) <= 64<<10 {
		*b = (*b)[:0]
		linePool.Put(b)
	}
}

// start runs the reader of r (the server's stdout).
func (u *upstream) start(r io.Reader, maxLine int) {
	go u.readLoop(r, maxLine)
}

// Done is closed when the server's stdout ended; Err says why.
func (u *upstream) Done() <-chan struct{} { return u.done }

func (u *upstream) Err() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.err
}

func (u *upstream) fail(err error) {
	u.mu.Lock()
	if u.err == nil {
		u.err = err
		close(u.done)
	}
	u.mu.Unlock()
}

// send writes one line (with its newline) to the server. It owns b.
func (u *upstream) send(b *[]byte) error {
	err := u.lw.writeLine(*b)
	putBuf(b)
	return err
}

// notify sends a notification upstream.
func (u *upstream) notify(method string, params []byte) error {
	b := getBuf()
	*b = appendRequest(*b, "", method, params)
	return u.send(b)
}

// respond sends a response upstream (to a server→client request).
func (u *upstream) respond(id mcp.ID, result []byte, rpcErr *mcp.RPCError) error {
	b := getBuf()
	if rpcErr != nil {
		*b = appendError(*b, id, rpcErr.Code, rpcErr.Message, rpcErr.Data)
	} else {
		*b = appendResponse(*b, id, result)
	}
	return u.send(b)
}

// call sends a request under the proxy's next id and waits for its answer,
// for ctx, or for timeout. token is the request's progress token (raw
// JSON) or "". When ctx ends first the server is told with
// notifications/cancelled, and ctx's error is returned.
func (u *upstream) call(ctx context.Context, method string, params []byte, token string, forward bool, timeout time.Duration) (*mcp.Message, error) {
	p := &pending{ch: make(chan *mcp.Message, 1), token: token, forward: forward}
	u.mu.Lock()
	if u.err != nil {
		err := u.err
		u.mu.Unlock()
		return nil, err
	}
	u.next++
	id := mcp.IntID(u.next)
	u.pending[id] = p
	if token != "" {
		if _, taken := u.tokens[token]; taken {
			delete(u.pending, id)
			u.mu.Unlock()
			return nil, errors.New("the progress token is already in use by another request")
		}
		u.tokens[token] = p
	}
	u.mu.Unlock()

	b := getBuf()
	*b = appendRequest(*b, id, method, params)
	if err := u.send(b); err != nil {
		u.forget(id, p)
		return nil, err
	}
	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timer = t.C
	}
	select {
	case m := <-p.ch:
		return m, nil
	case <-u.done:
		u.forget(id, p)
		return nil, u.Err()
	case <-ctx.Done():
		u.forget(id, p)
		u.cancel(id, "the client cancelled the request")
		return nil, ctx.Err()
	case <-timer:
		u.forget(id, p)
		u.cancel(id, "mcpform: no answer in time")
		return nil, &timeoutError{method, timeout}
	}
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

func (u *upstream) forget(id mcp.ID, p *pending) {
	u.mu.Lock()
	delete(u.pending, id)
	if p.token != "" && u.tokens[p.token] == p {
		delete(u.tokens, p.token)
	}
	u.mu.Unlock()
}

// progressTarget reports whether a progress notification's token belongs
// to a pending client request.
func (u *upstream) progressTarget(token []byte) bool {
	u.mu.Lock()
	p, ok := u.tokens[string(token)]
	u.mu.Unlock()
	return ok && p.forward
}

// pendingCount returns how many requests wait for the server.
func (u *upstream) pendingCount() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.pending)
}

func (u *upstream) readLoop(r io.Reader, maxLine int) {
	rd := mcp.NewReader(r, maxLine)
	for {
		line, err := rd.ReadLine()
		if err != nil {
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
		msg, err := mcp.DecodeMessage(line)
		if err != nil {
			u.warn("dropped a message from the server: %v: %s", err, clipBytes(line))
			continue
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
	p.ch <- msg
}

// caller is an mcp.Caller over this connection for the proxy's own requests
// (verification listings), with params wrapped by wrap.
func (u *upstream) caller(wrap func([]byte) []byte, timeout time.Duration) mcp.Caller {
	return func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		m, err := u.call(ctx, method, wrap(params), "", false, timeout)
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
