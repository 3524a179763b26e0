package runtime

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/mcpform/mcpform/mcp"
)

// The taint gate must talk to the client while a tools/call is pending (the
// legacy elicitation/create round trip), which a Middleware, given only the
// request, cannot. Each Request carries the run that serves it, and the gate
// reaches the client through the two methods below, reusing the proxy's
// table of requests sent to the client (srvReqs), so the client's answer is
// routed by clientResponse like any other.

// clientDeclared reports whether the client declared capability name (in
// initialize, or the latest 2026-07-28 envelope).
func (p *proxy) clientDeclared(name string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := find(p.clientCaps, name)
	return c != nil && string(c) != "null"
}

// errNoAnswer is a client that did not answer within the timeout.
var errNoAnswer = errors.New("the client did not answer")

// askClient sends the proxy's own request to the client and waits for its
// answer, the timeout, or ctx (the pending call's: a cancelled call stops
// waiting, and the client is told to drop the request).
func (p *proxy) askClient(ctx context.Context, method string, params []byte, timeout time.Duration) (*mcp.Message, error) {
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
	b := getBuf()
	*b = appendRequest(*b, id, method, params)
	p.write(*b)
	putBuf(b)
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
