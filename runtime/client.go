package runtime

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/mcpform/mcpform/mcp"
	"github.com/mcpform/mcpform/runtime/internal/pipe"
)

// The proxy is each Request's Client: the taint gate reaches the client
// through it while a tools/call is pending (the legacy elicitation/create
// round trip), and Ask reuses the proxy's table of requests sent to the
// client (srvReqs), so the client's answer is routed by clientResponse like
// any other.

var _ Client = (*proxy)(nil)

// Declared reports whether the client declared capability name (in
// initialize, or the latest 2026-07-28 envelope).
func (p *proxy) Declared(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := find(p.clientCaps, name)
	return c != nil && string(c) != "null"
}

// errNoAnswer is a client that did not answer within the timeout.
var errNoAnswer = errors.New("the client did not answer")

// Ask sends the proxy's own request to the client and waits for its
// answer, the timeout, or ctx (the pending call's: a cancelled call stops
// waiting, and the client is told to drop the request).
func (p *proxy) Ask(ctx context.Context, method string, params []byte, timeout time.Duration) (*mcp.Message, error) {
	sr := &serverRequest{ch: make(chan *mcp.Message, 1)}
	p.mu.Lock()
	p.srvNext++
	id := mcp.StringID("mcpform-" + strconv.FormatInt(p.srvNext, 10))
	p.srvReqs[id] = sr
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.srvReqs, id)
		p.mu.Unlock()
	}()
	b := pipe.GetLine()
	*b = mcp.AppendRequest(*b, id, method, params)
	p.write(*b)
	pipe.PutLine(b)
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case m := <-sr.ch:
		return m, nil
	case <-t.C:
		p.notifyClient("notifications/cancelled", []byte(`{"requestId":`+id.String()+`,"reason":"mcpform stopped waiting for an answer"}`))
		return nil, errNoAnswer
	case <-ctx.Done():
		p.notifyClient("notifications/cancelled", []byte(`{"requestId":`+id.String()+`,"reason":"the call was cancelled"}`))
		return nil, ctx.Err()
	}
}
