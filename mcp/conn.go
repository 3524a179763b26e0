package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/mcpform/mcpform/internal/escape"
)

// ErrServerClosed means the server closed its stdout (usually: it exited)
// or stopped reading its stdin.
var ErrServerClosed = errors.New("server closed the connection")

// protocolError is a fatal breach of the protocol by the server: stdout
// that is not JSON-RPC, a line over the cap, a response to a request that
// was never sent. The connection is unusable afterwards.
type protocolError struct {
	Msg  string
	Line []byte // the offending line (or its start), when there is one
	Err  error
}

func (e *protocolError) Error() string {
	s := e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	if e.Line != nil {
		s += ": " + clip(e.Line)
	}
	return s
}

func (e *protocolError) Unwrap() error { return e.Err }

// rpcConnOptions configures a rpcConn. The zero value is a strict client: the
// default line cap, no per-request timeout, notifications ignored,
// server→client requests denied with -32601, and a response to an id never
// sent a fatal protocolError.
type rpcConnOptions struct {
	MaxLineSize    int           // per line; DefaultMaxLineSize when 0
	RequestTimeout time.Duration // per Call; none when 0

	// OnNotification is called for each notification from the server, on
	// the reading goroutine and in stream order (so a list_changed sent
	// before a response is seen before that response is): keep it short.
	OnNotification func(*Message)

	// OnRequest answers a server→client request. It runs on its own
	// goroutine. Nil denies every request with -32601.
	OnRequest func(ctx context.Context, req *Message) (json.RawMessage, *RPCError)

	// DropUnknownResponses drops responses whose id was never sent (the
	// proxy's rule) instead of failing the connection (a probe's rule).
	DropUnknownResponses bool
}

// rpcConn is the probe's JSON-RPC client over a newline-delimited stream: it
// numbers its own requests, matches responses to them, routes notifications,
// and answers the server's requests. The proxy has a connection of its own,
// built for a hostile peer it must outlive (runtime/internal/upstream).
type rpcConn struct {
	r    *Reader
	w    io.Writer
	opts rpcConnOptions

	wmu  sync.Mutex
	wbuf []byte

	mu        sync.Mutex
	nextID    int64
	pending   map[ID]chan *Message
	abandoned map[ID]struct{} // timed out or cancelled: a late answer is dropped
	done      chan struct{}
	err       error

	ctx    context.Context // for OnRequest handlers; cancelled when the rpcConn ends
	cancel context.CancelFunc
}

// maxAbandoned bounds the memory of timed-out ids.
const maxAbandoned = 1024

// newRPCConn starts reading r and returns a rpcConn that writes to w.
func newRPCConn(r io.Reader, w io.Writer, opts rpcConnOptions) *rpcConn {
	ctx, cancel := context.WithCancel(context.Background())
	c := &rpcConn{
		r:         NewReader(r, opts.MaxLineSize),
		w:         w,
		opts:      opts,
		pending:   map[ID]chan *Message{},
		abandoned: map[ID]struct{}{},
		done:      make(chan struct{}),
		ctx:       ctx,
		cancel:    cancel,
	}
	go c.readLoop()
	return c
}

// Done is closed when the rpcConn has stopped reading; Err says why.
func (c *rpcConn) Done() <-chan struct{} { return c.done }

// Err returns why the rpcConn stopped (ErrServerClosed at the end of the
// stream, a *protocolError, a read error), or nil while it is running.
func (c *rpcConn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *rpcConn) fail(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
		close(c.done)
		c.cancel()
	}
	c.mu.Unlock()
}

func (c *rpcConn) readLoop() {
	for {
		line, err := c.r.ReadLine()
		if err != nil {
			var tooLong *LineTooLongError
			switch {
			case errors.Is(err, io.EOF):
				c.fail(ErrServerClosed)
			case errors.As(err, &tooLong):
				c.fail(&protocolError{Msg: "server sent a message over the size cap", Err: err})
			default:
				c.fail(fmt.Errorf("reading from server: %w", err))
			}
			return
		}
		msg, err := DecodeMessage(line)
		if err != nil {
			var de *DecodeError
			if errors.As(err, &de) && de.Code == CodeParseError {
				c.fail(&protocolError{Msg: "server wrote non-JSON to stdout", Line: clipLine(line)})
			} else {
				c.fail(&protocolError{Msg: "server sent an invalid message", Err: err, Line: clipLine(line)})
			}
			return
		}
		switch {
		case msg.IsResponse():
			if !c.deliver(msg) {
				return
			}
		case msg.IsNotification():
			if c.opts.OnNotification != nil {
				c.opts.OnNotification(msg)
			}
		default:
			go c.answer(msg)
		}
	}
}

func clipLine(line []byte) []byte {
	if len(line) > 200 {
		line = line[:200]
	}
	return append([]byte(nil), line...)
}

// deliver hands a response to its caller; false means the rpcConn failed.
func (c *rpcConn) deliver(msg *Message) bool {
	c.mu.Lock()
	id := msg.ID
	if id == "" && len(c.pending) == 1 {
		// An error with a null id ("if there was an error in detecting the
		// id") while one request is outstanding can only be about that
		// one: some legacy servers answer a request before initialize so.
		for pid := range c.pending {
			id = pid
		}
	}
	ch, ok := c.pending[id]
	if ok {
		delete(c.pending, id)
	}
	_, late := c.abandoned[msg.ID]
	if late {
		delete(c.abandoned, msg.ID)
	}
	c.mu.Unlock()
	switch {
	case ok:
		ch <- msg // buffered
	case late, c.opts.DropUnknownResponses:
	default:
		c.fail(&protocolError{Msg: fmt.Sprintf("server answered request id %s, which was never sent", escape.String(msg.ID.String()))})
		return false
	}
	return true
}

func (c *rpcConn) answer(req *Message) {
	var result json.RawMessage
	var rpcErr *RPCError
	if c.opts.OnRequest != nil {
		result, rpcErr = c.opts.OnRequest(c.ctx, req)
	} else {
		rpcErr = &RPCError{Code: CodeMethodNotFound, Message: "mcpform does not serve " + req.Method}
	}
	resp := &Message{ID: req.ID, Result: result, Error: rpcErr}
	_ = c.write(resp)
}

func (c *rpcConn) write(m *Message) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	b, err := AppendMessage(c.wbuf[:0], m)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	c.wbuf = b
	if _, err := c.w.Write(b); err != nil {
		return fmt.Errorf("%w: writing to server: %v", ErrServerClosed, err)
	}
	return nil
}

// Notify sends a notification.
func (c *rpcConn) Notify(method string, params json.RawMessage) error {
	select {
	case <-c.done:
		return c.Err()
	default:
	}
	return c.write(&Message{Method: method, Params: params})
}

// Call sends a request and waits for its response, for ctx, or for the
// request timeout. An error response is returned as a *RPCError. A timeout
// wraps context.DeadlineExceeded; a rpcConn that ended returns its Err.
func (c *rpcConn) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if c.opts.RequestTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.opts.RequestTimeout)
		defer cancel()
	}
	ch := make(chan *Message, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
	c.nextID++
	id := IntID(c.nextID)
	c.pending[id] = ch
	c.mu.Unlock()

	if err := c.write(&Message{ID: id, Method: method, Params: params}); err != nil {
		c.forget(id, false)
		// The reader usually sees the end of the stream a moment later;
		// its reason is the better one.
		select {
		case <-c.done:
			return nil, c.Err()
		case <-time.After(100 * time.Millisecond):
			return nil, err
		}
	}
	select {
	case msg := <-ch:
		if msg.Error != nil {
			return nil, msg.Error
		}
		return msg.Result, nil
	case <-c.done:
		return nil, c.Err()
	case <-ctx.Done():
		c.forget(id, true)
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("no answer to %s in time: %w", method, ctx.Err())
		}
		return nil, ctx.Err()
	}
}

func (c *rpcConn) forget(id ID, abandon bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pending, id)
	if abandon {
		if len(c.abandoned) >= maxAbandoned {
			for k := range c.abandoned {
				delete(c.abandoned, k)
				break
			}
		}
		c.abandoned[id] = struct{}{}
	}
}
