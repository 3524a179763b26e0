package runtime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/mcpform/mcpform/internal/mutation"
	"github.com/mcpform/mcpform/mcp"
	"github.com/mcpform/mcpform/runtime/audit"
)

// A legacy server asks its client for input with requests of its own
// (sampling/createMessage, elicitation/create, roots/list) while it works
// on a call; a 2026-07-28 client answers no wire requests. For such a
// client the server's request travels as the pending call's answer: an
// input_required result whose inputRequests hold it and whose requestState
// is a token of mcpform's own (random, redeemable once, in this run, for
// the same method). The call stays pending upstream. The client's retry,
// with the answer in inputResponses and the token, is not sent upstream:
// its answer goes back to the server as the answer to its request, and the
// retry gets the call's final result (or the next input_required, when the
// server asks again). The one capability rule (mayAskClient) decides what
// may be asked, as for every other path.

// relayPrefix marks mcpform's requestState tokens.
const relayPrefix = "mcpform-relay-"

// relayCall is one call of a 2026-07-28 client in flight at a legacy
// server: who gets its answer. reply is the original call's until a server
// request parks it (answered with input_required), then nil until the retry
// attaches its own; an answer that comes meanwhile waits in answer.
type relayCall struct {
	// method, item and args (the arguments' digest) are the call's: a
	// retry must repeat them, so that what the links after enforce (the
	// taint gate) saw of the retry is what the server answered.
	method, item, args string
	// cancel cancels the call upstream (the original request's context,
	// which the pending call still watches): a retry that is cancelled
	// cancels the call it continues.
	cancel func()

	mu       sync.Mutex
	reply    Reply
	answered bool
	resp     *Response
	err      error
}

// deliver hands the call's outcome to whoever waits for it now.
func (c *relayCall) deliver(resp *Response, err error) {
	c.mu.Lock()
	r := c.reply
	c.reply = nil
	if r == nil {
		c.answered, c.resp, c.err = true, resp, err
	}
	c.mu.Unlock()
	if r != nil {
		r(resp, err)
	}
}

// park takes the current reply away (to answer it with input_required);
// false when there is none to take (the call is already parked, or
// answered).
func (c *relayCall) park() (Reply, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.reply
	c.reply = nil
	return r, r != nil && !c.answered
}

// attach makes reply the one the call's outcome goes to, at once when it
// came meanwhile.
func (c *relayCall) attach(reply Reply) {
	c.mu.Lock()
	if !c.answered {
		c.reply = reply
		c.mu.Unlock()
		return
	}
	resp, err := c.resp, c.err
	c.mu.Unlock()
	reply(resp, err)
}

// relayState is one server request parked in an input_required result.
// Whoever takes it from relays (the client's retry, or the timer when none
// comes in time) answers the server's request, once.
type relayState struct {
	call    *relayCall
	key     string
	request *mcp.Message
	token   string      // set by park, under relays.mu
	timer   *time.Timer // set by park, under relays.mu
}

// answer answers the server's parked request: with result, or rpcErr. The
// answer is written before the retry's own reply, so the server has it
// even when the client leaves right after.
func (st *relayState) answer(p *proxy, result []byte, rpcErr *mcp.RPCError) {
	st.timer.Stop()
	if result != nil {
		result = oneLine(result)
	}
	_ = p.up.Respond(st.request.ID, result, rpcErr)
}

// relays are a run's calls in flight that a server request may be carried
// by, oldest first, and the parked requests by token.
type relays struct {
	mu     sync.Mutex
	calls  []*relayCall
	states map[string]*relayState
	next   int64
}

func (r *relays) add(c *relayCall) {
	r.mu.Lock()
	r.calls = append(r.calls, c)
	r.mu.Unlock()
}

func (r *relays) remove(c *relayCall) {
	r.mu.Lock()
	for i, x := range r.calls {
		if x == c {
			r.calls = append(r.calls[:i], r.calls[i+1:]...)
			break
		}
	}
	r.mu.Unlock()
}

// oldest is the call a server request is carried by.
func (r *relays) oldest() *relayCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.calls) == 0 {
		return nil
	}
	return r.calls[0]
}

// park registers a parked request and returns its token (st.key is its
// key); expired runs if no one takes it within timeout.
func (r *relays) park(st *relayState, newToken func() string, timeout time.Duration, expired func()) (token string) {
	if newToken != nil {
		token = newToken()
	} else {
		var b [16]byte
		_, _ = rand.Read(b[:])
		token = relayPrefix + hex.EncodeToString(b[:])
	}
	r.mu.Lock()
	if r.states == nil {
		r.states = map[string]*relayState{}
	}
	r.next++
	st.key = "mcpform-" + strconv.FormatInt(r.next, 10)
	st.token = token
	r.states[token] = st
	st.timer = time.AfterFunc(timeout, func() {
		r.mu.Lock()
		mine := r.states[st.token] == st
		if mine {
			delete(r.states, st.token)
		}
		r.mu.Unlock()
		if mine {
			expired()
		}
	})
	r.mu.Unlock()
	return token
}

// take redeems a token, once.
func (r *relays) take(token string) *relayState {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.states[token]
	delete(r.states, token)
	return st
}

// relayToModern carries the server's request m to a 2026-07-28 client in
// the oldest call in flight, and answers the server with what the client's
// retry brings (or an error, after RequestTimeout).
func (p *proxy) relayToModern(m *mcp.Message) {
	fail := func(code int64, why string) {
		_ = p.up.Respond(m.ID, nil, &mcp.RPCError{Code: code, Message: why})
	}
	c := p.relays.oldest()
	if c == nil {
		p.warnf("denied the server's %s request: the 2026-07-28 client can be asked only in a call's result, and none is in flight", m.Method)
		fail(mcp.CodeInternalError, "mcpform denied "+m.Method+": the client can be asked only during a call")
		return
	}
	original, ok := c.park()
	if !ok {
		p.warnf("denied the server's %s request: the call already waits for the client's answer to another", m.Method)
		fail(mcp.CodeInternalError, "mcpform denied "+m.Method+": one request at a time during a call")
		return
	}
	if err := p.record(&audit.Record{Event: "server-request", Method: m.Method, ID: m.ID.String(), Detail: "as input_required"}); err != nil {
		c.attach(original)
		fail(mcp.CodeInternalError, "mcpform cannot write its audit log")
		return
	}
	st := &relayState{call: c, request: m}
	token := p.relays.park(st, p.opts.relayToken, p.opts.RequestTimeout, func() {
		fail(codeTimeout, fmt.Sprintf("the client did not answer %s within %v", m.Method, p.opts.RequestTimeout))
	})
	params := clientParams(m.Params)
	b := []byte(`{"resultType":"input_required","inputRequests":{`)
	b = mcp.AppendQuoted(b, st.key)
	b = append(b, `:{"method":`...)
	b = mcp.AppendQuoted(b, m.Method)
	if params != nil {
		b = append(append(b, `,"params":`...), params...)
	}
	b = append(b, `}},"requestState":`...)
	b = append(mcp.AppendQuoted(b, token), '}')
	original(&Response{Result: b}, nil)
}

// redeem handles a retry that carries one of mcpform's requestState tokens
// (Request.relayToken): the answer in inputResponses goes to the server's
// parked request, and the retry gets the call's outcome. It reports false
// for a request that carries no such token.
func (p *proxy) redeem(ctx context.Context, req *Request, reply Reply) bool {
	if req.relayToken == "" {
		return false
	}
	st := p.relays.take(req.relayToken)
	if st == nil && mutation.Off("relaytokens") {
		return false // as if the token were no one's: the retry goes upstream
	}
	switch {
	case st == nil:
		reply(rpcError(mcp.CodeInvalidParams, "requestState is not one mcpform issued in this run, or was used already"), nil)
		return true
	case st.call.method != req.Method || st.call.item != req.Item || st.call.args != argsDigest(req.Arguments):
		st.answer(p, nil, &mcp.RPCError{Code: mcp.CodeInternalError, Message: "the client retried another call"})
		reply(rpcError(mcp.CodeInvalidParams, "requestState belongs to another call: a retry repeats the call's method, name and arguments"), nil)
		return true
	}
	if answer := find(find(req.Params, "inputResponses"), st.key); answer != nil && answer[0] == '{' {
		st.answer(p, answer, nil)
	} else {
		st.answer(p, nil, &mcp.RPCError{Code: mcp.CodeInternalError, Message: "the client did not answer the request"})
	}
	st.call.attach(reply)
	if st.call.cancel != nil {
		context.AfterFunc(ctx, st.call.cancel)
	}
	return true
}
