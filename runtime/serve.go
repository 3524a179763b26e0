package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/internal/mutation"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/mcp"
	"github.com/mcpform/mcpform/runtime/audit"
	"github.com/mcpform/mcpform/runtime/internal/upstream"
)

// served holds what the proxy answers from the lock, encoded once at start:
// a list of 1,000 tools is served by copying bytes, not by encoding.
type served struct {
	caps, info, instructions []byte // compact JSON; instructions nil when none
	metaInfo                 []byte // "io.modelcontextprotocol/serverInfo":{…}
	has                      [4]bool
	lists                    [4][2][]byte // by kind: legacy and 2026-07-28 results
	discover                 []byte
	legacyVersion            string
	taskRequired             map[string]bool // tools run as tasks for a modern client (taskcall.go)
}

// modernListTail is what a 2026-07-28 client needs on a list result besides
// the list: the lock's lists do not change while a run serves them, but a
// quarantine may start at any time, so clients are told not to cache.
const modernListTail = `"resultType":"complete","ttlMs":0,"cacheScope":"private"`

func newServed(e *lock.Entry) *served {
	s := &served{caps: compact(e.Capabilities), info: compact(e.ServerInfo), taskRequired: taskRequired(e)}
	if e.Instructions != nil {
		s.instructions = mcp.AppendQuoted(nil, *e.Instructions)
	}
	s.metaInfo = append([]byte(`"`+mcp.MetaServerInfo+`":`), s.info...)
	s.legacyVersion = mcp.LatestLegacyVersion
	if !e.Modern() {
		s.legacyVersion = e.ProtocolVersion
	}
	for i, k := range lock.Kinds {
		c := find(s.caps, []string{"tools", "prompts", "resources", "resources"}[i])
		s.has[i] = c != nil && string(c) != "null"
		body := []byte(`{"` + k.Field() + `":[`)
		for j, it := range e.List(k) {
			if j > 0 {
				body = append(body, ',')
			}
			body = append(body, compact(it.JSON)...)
		}
		body = append(body, ']')
		s.lists[i][0] = append(slices.Clip(body), '}')
		m := append(body, ","+modernListTail+`,"_meta":{`...)
		m = append(m, s.metaInfo...)
		s.lists[i][1] = append(m, "}}"...)
	}
	d := []byte(`{"supportedVersions":["` + mcp.ModernVersion + `"],"capabilities":`)
	d = append(d, s.caps...)
	if s.instructions != nil {
		d = append(append(d, `,"instructions":`...), s.instructions...)
	}
	d = append(d, ","+modernListTail+`,"_meta":{`...)
	d = append(d, s.metaInfo...)
	s.discover = append(d, "}}"...)
	return s
}

// initialize answers a legacy initialize from the lock. The version follows
// the legacy negotiation: the client's when it is one mcpform speaks (the
// proxy translates), else the locked one.
func (s *served) initialize(params []byte) []byte {
	v := s.legacyVersion
	if want, ok := stringValue(find(params, "protocolVersion")); ok && slices.Contains(mcp.LegacyVersions, want) {
		v = want
	}
	b := []byte(`{"protocolVersion":`)
	b = mcp.AppendQuoted(b, v)
	b = append(append(b, `,"capabilities":`...), s.caps...)
	b = append(append(b, `,"serverInfo":`...), s.info...)
	if s.instructions != nil {
		b = append(append(b, `,"instructions":`...), s.instructions...)
	}
	return append(b, '}')
}

// terminal is the end of the chain: the lock answers what it can, the
// server the rest.
func (p *proxy) terminal(ctx context.Context, req *Request, reply Reply) {
	if req.Method == "subscriptions/listen" {
		p.listen(ctx, req, reply) // mcpform's own stream (listen.go)
		return
	}
	if r := p.local(req); r != nil {
		reply(r, nil)
		return
	}
	p.forward(ctx, req, reply)
}

// local answers what the lock answers; nil for what goes to the server.
func (p *proxy) local(req *Request) *Response {
	switch req.Method {
	case "initialize":
		return &Response{Result: p.served.initialize(req.Params), Final: !req.Modern}
	case "server/discover":
		return &Response{Result: p.served.discover, Final: true}
	case "logging/setLevel":
		if p.modernUp {
			// A 2026-07-28 server has no logging/setLevel (the Go SDK
			// answers "method not found"): it takes the level in each
			// request's _meta. A legacy client's level is kept here and
			// sent with each of its requests from now on (forward).
			level := find(req.Params, "level")
			if !mcp.IsLogLevel(level) {
				return rpcError(mcp.CodeInvalidParams, "logging/setLevel needs params.level, one of the logging levels (debug … emergency)")
			}
			p.clientLevel.Store(&level)
			return &Response{Result: []byte("{}")}
		}
	}
	if i := slices.Index(mcp.ListMethods[:], req.Method); i >= 0 && !mutation.Off("lockserve") {
		if !p.served.has[i] {
			return rpcError(mcp.CodeMethodNotFound, "the locked server does not support "+req.Method)
		}
		if find(req.Params, "cursor") != nil {
			return rpcError(mcp.CodeInvalidParams, "invalid cursor: mcpform serves every list in one page")
		}
		era := 0
		if req.Modern {
			era = 1
		}
		if b := p.blockedLists.Load(); b != nil {
			return &Response{Result: b[i][era], Final: true}
		}
		return &Response{Result: p.served.lists[i][era], Final: true}
	}
	return nil
}

// forward sends the request to the server under the proxy's own id; the
// answer is handled on the goroutine that reads the server.
func (p *proxy) forward(ctx context.Context, req *Request, reply Reply) {
	if p.redeem(ctx, req, reply) {
		return // a retry that carries a server request's answer, or a refused token
	}
	if !p.modernUp && req.Modern && relayable[req.Method] {
		// A server request during this call reaches the client in its
		// result (relay.go).
		c := &relayCall{method: req.Method, item: req.Item, args: argsDigest(req.Arguments), reply: reply}
		if call, ok := ctx.(*upstream.Call); ok {
			c.cancel = call.Cancel
		}
		p.relays.add(c)
		reply = func(resp *Response, err error) {
			p.relays.remove(c)
			c.deliver(resp, err)
		}
	}
	if p.asTask(req) {
		p.sendAsTask(ctx, req, reply)
		return
	}
	p.send(ctx, req, req.Params, 0, reply)
}

// relayable are the calls a legacy server may ask its client for input
// during, whose result can be input_required for a 2026-07-28 client.
var relayable = map[string]bool{"tools/call": true, "prompts/get": true, "resources/read": true}

// maxInputRounds bounds how often a 2026-07-28 server may ask a legacy
// client for input within one call, maxInputRequests how much at once:
// each is a question to the user.
const (
	maxInputRounds   = 8
	maxInputRequests = 16
)

// send sends req upstream with params (the client's, or a retry's with the
// client's input responses), round the retries so far.
func (p *proxy) send(ctx context.Context, req *Request, params []byte, round int, reply Reply) {
	token := ""
	if t := find(req.meta, "progressToken"); t != nil {
		token = string(t)
	}
	p.up.Request(ctx, req.Method, p.wrapUpLevel(params, p.levelFor(req)), token, true, p.opts.RequestTimeout, func(m *mcp.Message, err error) {
		if err != nil {
			reply(p.unanswered(ctx, err))
			return
		}
		if m.Error != nil {
			reply(&Response{Error: m.Error}, nil)
			return
		}
		if r := p.checkInputRequests(req, m.Result); r != nil && !mutation.Off("inputrequests") {
			reply(r, nil)
			return
		}
		if p.modernUp && !req.Modern && resultType(m.Result) == "input_required" {
			// A legacy client has no input_required: ask it the
			// legacy way, then retry the call with its answers. The
			// round trips may take a person's time: not on the reader.
			result := m.Result
			go p.inputForLegacy(ctx, req, params, result, round, reply)
			return
		}
		reply(&Response{Result: m.Result}, nil)
	})
}

// inputForLegacy turns a 2026-07-28 server's input_required result into
// requests to a legacy client (checkInputRequests allowed each), and
// retries the call with the client's answers in inputResponses and the
// server's requestState as they were.
func (p *proxy) inputForLegacy(ctx context.Context, req *Request, params, result []byte, round int, reply Reply) {
	if round >= maxInputRounds {
		reply(rpcError(mcp.CodeInternalError, fmt.Sprintf("the server asked for input %d times in one call: mcpform stopped relaying", maxInputRounds)), nil)
		return
	}
	result = oneLine(result)
	responses := []byte(`"inputResponses":{`)
	var ms [16]member
	asks := members(ms[:0], find(result, "inputRequests"))
	if len(asks) > maxInputRequests {
		reply(rpcError(mcp.CodeInternalError, fmt.Sprintf("the server asked for %d inputs at once: mcpform relays at most %d a round", len(asks), maxInputRequests)), nil)
		return
	}
	for i, m := range asks {
		method, _ := stringValue(find(m.Value, "method"))
		asked := clientParams(find(m.Value, "params"))
		_ = p.record(&audit.Record{Event: "server-request", Method: method, ID: req.ID.String(), Item: req.Item, Detail: "input_required"})
		answer, err := p.Ask(ctx, method, asked, p.opts.RequestTimeout)
		switch {
		case ctx.Err() != nil:
			reply(nil, ctx.Err())
			return
		case err != nil:
			reply(rpcError(mcp.CodeInternalError, fmt.Sprintf("the server asked the client for %s, which did not answer: %v", escape.String(method), err)), nil)
			return
		case answer.Error != nil:
			reply(rpcError(mcp.CodeInternalError, fmt.Sprintf("the server asked the client for %s, which refused: %s", escape.String(method), escape.String(answer.Error.Message))), nil)
			return
		}
		if i > 0 {
			responses = append(responses, ',')
		}
		responses = append(append(append(responses, m.Key...), ':'), oneLine(answer.Result)...)
	}
	responses = append(responses, '}')
	var state []byte
	if rs := find(result, "requestState"); rs != nil {
		state = append([]byte(`"requestState":`), rs...)
	}
	if params == nil {
		params = []byte("{}")
	}
	retry := rewriteObject(nil, oneLine(params), func(m member) bool { return m.KeyIs("inputResponses") || m.KeyIs("requestState") }, responses, state)
	p.send(ctx, req, retry, round+1, reply)
}

// levelFor returns the log level a 2026-07-28 server gets with req: the
// client's own for a 2026-07-28 client, the last logging/setLevel of a
// legacy one. For a legacy server, a 2026-07-28 client's level becomes a
// logging/setLevel of mcpform's own, sent ahead of req when it changed:
// the same messages reach the client in either pairing of eras.
func (p *proxy) levelFor(req *Request) []byte {
	if p.modernUp {
		if req.Modern {
			return req.logLevel
		}
		if l := p.clientLevel.Load(); l != nil {
			return *l
		}
		return nil
	}
	if req.logLevel == nil || !p.checker.Capability("logging", "") {
		return nil
	}
	if prev := p.upLevel.Swap(&req.logLevel); prev != nil && bytes.Equal(*prev, req.logLevel) {
		return nil
	}
	params := append(append([]byte(`{"level":`), req.logLevel...), '}')
	// Not under the call's context, which watches one request only: the
	// level outlives the call anyway. Sent before req, on the same stream.
	p.up.Request(context.Background(), "logging/setLevel", params, "", false, p.opts.StartTimeout, func(m *mcp.Message, err error) {
		if err == nil && m.Error != nil {
			err = m.Error
		}
		if err != nil {
			p.warnf("the server did not take the client's log level %s: %v", req.logLevel, err)
		}
	})
	return nil
}

// unanswered is the outcome of a forwarded request that got no answer.
func (p *proxy) unanswered(ctx context.Context, err error) (*Response, error) {
	var te *upstream.TimeoutError
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.As(err, &te):
		return rpcError(codeTimeout, te.Error()), nil
	case errors.As(err, new(*upstream.DroppedError)):
		return rpcError(mcp.CodeInternalError, err.Error()), nil
	case err == mcp.ErrServerClosed:
		return rpcError(mcp.CodeInternalError, "the server exited before it answered"), nil
	case errors.Is(err, mcp.ErrServerClosed):
		return rpcError(mcp.CodeInternalError, fmt.Sprintf("the server is gone before it answered: %v", err)), nil
	}
	return rpcError(mcp.CodeInternalError, fmt.Sprintf("could not reach the server: %v", err)), nil
}

// shapeResponse appends the response line for resp to a client of req's era.
// A 2026-07-28 client gets resultType, the locked serverInfo in _meta (never
// the live one: informational drift stays invisible), and ttlMs/cacheScope
// where its schema requires them; a legacy client gets none of those.
// Only the top level of the result is rewritten; the rest is copied.
func (p *proxy) shapeResponse(b []byte, req *Request, resp *Response) ([]byte, *mcp.RPCError) {
	res := resp.Result
	if resp.Final {
		return mcp.AppendResponse(b, req.ID, res), nil
	}
	if res == nil {
		res = []byte("{}")
	}
	res = oneLine(res)
	rt := find(res, "resultType")
	if req.Modern {
		rtm := []byte(`"resultType":"complete"`)
		if rt != nil {
			rtm = append([]byte(`"resultType":`), rt...)
		}
		var cache []byte
		if req.Method == "resources/read" && find(res, "ttlMs") == nil && find(res, "cacheScope") == nil {
			cache = []byte(`"ttlMs":0,"cacheScope":"private"`)
		}
		b = append(b, `{"jsonrpc":"2.0","id":`...)
		b = append(b, req.ID.String()...)
		b = append(b, `,"result":`...)
		b = rewriteObject(b, res, dropShaped, rtm, cache, metaWithout(res, p.served.metaInfo))
		return append(b, "}\n"...), nil
	}
	if !p.modernUp {
		return mcp.AppendResponse(b, req.ID, oneLine(res)), nil
	}
	if rt != nil && string(rt) != `"complete"` {
		return b, &mcp.RPCError{Code: mcp.CodeInternalError, Message: "the server asked for more input (resultType " + clip(string(rt), 200) + "), which mcpform cannot relay to a client of the initialize era"}
	}
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, req.ID.String()...)
	b = append(b, `,"result":`...)
	b = rewriteObject(b, res, dropModern, metaWithout(res))
	return append(b, "}\n"...), nil
}

func dropShaped(m member) bool { return m.KeyIs("resultType") || m.KeyIs("_meta") }

func dropModern(m member) bool {
	return m.KeyIs("resultType") || m.KeyIs("_meta") || m.KeyIs("ttlMs") || m.KeyIs("cacheScope")
}
