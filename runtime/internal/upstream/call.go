package upstream

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Call is the context of one client request, cancelled when the client
// cancels the request or the run ends. A context.WithCancel and a
// context.AfterFunc per request cost eight allocations and a tenth of the
// proxy's own time per call; this one is one allocation, and watching it
// (Conn.Request, context.AfterFunc) costs no goroutine.
type Call struct {
	// on is the reader running the request's handlers or its answer's
	// continuations right now (OnClientReader, OnServerReader), or 0: the
	// reader holds the other side's stream, so lines it writes for the
	// request may wait for its release (pipe.Writer.QueueLine).
	On atomic.Int32

	mu      sync.Mutex
	done    chan struct{} // made by the first Done
	err     error
	watcher canceller          // the forwarded request, told once when cancelled
	after   map[*func()]func() // context.AfterFunc's functions
}

const (
	OnClientReader = 1 + iota
	OnServerReader
)

// canceller is told that the request's context was cancelled.
type canceller interface{ cancelled() }

var _ context.Context = (*Call)(nil)

func (c *Call) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *Call) Value(any) any               { return nil }

func (c *Call) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
		if c.err != nil {
			close(c.done)
		}
	}
	return c.done
}

func (c *Call) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// cancel cancels the context (once) and runs what watches it.
func (c *Call) Cancel() {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = context.Canceled
	if c.done != nil {
		close(c.done)
	}
	w, after := c.watcher, c.after
	c.watcher, c.after = nil, nil
	c.mu.Unlock()
	if w != nil {
		w.cancelled()
	}
	for _, f := range after {
		go f()
	}
}

// watch makes w the one watcher told of a cancellation; it reports false
// (and does not keep w) when the context is already cancelled.
func (c *Call) watch(w canceller) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return false
	}
	c.watcher = w
	return true
}

// unwatch drops w, if it is still the watcher.
func (c *Call) unwatch(w canceller) {
	c.mu.Lock()
	if c.watcher == w {
		c.watcher = nil
	}
	c.mu.Unlock()
}

// AfterFunc is the hook context.AfterFunc (and every context derived from
// this one) uses instead of a goroutine per watch.
func (c *Call) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		go f()
		return func() bool { return false }
	}
	if c.after == nil {
		c.after = map[*func()]func(){}
	}
	key := &f
	c.after[key] = f
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		_, ok := c.after[key]
		delete(c.after, key)
		return ok
	}
}
