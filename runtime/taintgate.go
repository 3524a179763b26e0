package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/internal/mutation"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/mcp"
	"github.com/mcpform/mcpform/policy"
	"github.com/mcpform/mcpform/runtime/audit"
	"github.com/mcpform/mcpform/runtime/taint"
)

// TaintGateOptions configure the taint gate of one run.
type TaintGateOptions struct {
	// Policy is the entry's policy.taint (nil: this server has no sources
	// and no sinks; the gate then passes everything through).
	Policy *policy.Taint
	// Store is the session store. When it could not be opened, StoreErr
	// says why and every source and sink call is refused: a gate that
	// cannot remember taint must not pretend the session is clean.
	Store    *taint.Store
	StoreErr error
	// Audit records every decision (required).
	Audit *audit.Log
	// Timeout bounds the wait for the user's answer to a legacy
	// elicitation/create (default 5 minutes); StateTTL is how long a
	// 2026-07-28 requestState stays redeemable (default 10 minutes).
	Timeout  time.Duration
	StateTTL time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// TaintGateFor is the gate `mcpform run` installs for every entry: even a
// server without sources needs it, because another server of the session
// may taint the session its sinks are called in. getenv locates the state
// directory (taint.DefaultDir).
func TaintGateFor(e *lock.Entry, audit *audit.Log, getenv func(string) string) Middleware {
	o := TaintGateOptions{Audit: audit}
	if getenv == nil {
		getenv = os.Getenv
	}
	if e != nil && e.Policy != nil {
		o.Policy = e.Policy.Taint
	}
	dir, err := taint.DefaultDir(getenv)
	if err == nil {
		o.Store, err = taint.Open(dir)
	}
	o.StoreErr = err
	return TaintGate(o)
}

// approvalKey is the key of the proxy's elicitation in inputRequests (and
// of the client's answer in inputResponses).
const approvalKey = "mcpform-taint-approval"

// TaintGate returns the middleware that tracks taint and asks for approval
// (docs/GUARANTEES.md, section 5). It sits after quarantine and before
// enforcement (the chain's order is in chain.go and docs/ARCHITECTURE.md):
// a source result taints the session on its way back to the client, and a
// sink call in a tainted session reaches the server only with the user's
// approval.
func TaintGate(o TaintGateOptions) Middleware {
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Minute
	}
	if o.StateTTL <= 0 {
		o.StateTTL = 10 * time.Minute
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	g := &taintGate{o: o}
	if o.Policy != nil {
		g.sources, g.sinks = o.Policy.Sources, o.Policy.Sinks
	}
	return g.wrap
}

type taintGate struct {
	o              TaintGateOptions
	sources, sinks []string
	carried        carried
}

// source returns the policy label a request's result taints the session
// under.
func (g *taintGate) source(req *Request) (string, bool) {
	switch req.Method {
	case "tools/call", "tasks/result": // a task's result is its tool's
		if req.HasItem && slices.Contains(g.sources, req.Item) {
			return req.Item, true
		}
	case "resources/read":
		if slices.Contains(g.sources, policy.AllResources) {
			return policy.AllResources, true
		}
	case "prompts/get":
		if slices.Contains(g.sources, policy.AllPrompts) {
			return policy.AllPrompts, true
		}
	}
	return "", false
}

// sink reports whether req is a sink call the gate must admit. So is a
// retry that continues one (the client's answers to the server's
// input_required, or to a server request relay.go carried): those answers
// reach the server as part of the sink call, and in a tainted session they
// may be what the taint steered.
func (g *taintGate) sink(req *Request) bool {
	return req.Method == "tools/call" && req.HasItem && slices.Contains(g.sinks, req.Item)
}

func (g *taintGate) wrap(next Handler) Handler {
	return func(ctx context.Context, req *Request, reply Reply) {
		if mutation.Off("taint") {
			next(ctx, req, reply)
			return
		}
		src, isSource := g.source(req)
		isSink := g.sink(req)
		if !isSource && !isSink {
			next(ctx, req, reply)
			return
		}
		if g.o.Store == nil {
			why := fmt.Sprintf("mcpform cannot track taint for this session (%v), so it refuses the calls its taint policy covers", g.o.StoreErr)
			g.audit(req, "deny", "taint state unavailable", why)
			reply(g.refuse(req, why), nil)
			return
		}
		forwarded := reply
		if isSource {
			forwarded = func(resp *Response, err error) {
				if err != nil || resp == nil || !taints(resp) {
					reply(resp, err)
					return
				}
				// Recording the taint takes the session's file lock
				// and a sync to disk: not on the goroutine that reads
				// the server, which other answers wait for.
				go func() { reply(g.taintOnReturn(req, src, resp), nil) }()
			}
		}
		if isSink {
			g.gateSink(ctx, req, next, reply, forwarded)
			return
		}
		next(ctx, req, forwarded)
	}
}

// taintOnReturn records the taint before the source's result is returned:
// once the client holds it, it is too late. A result that cannot be
// recorded is withheld (fail closed).
func (g *taintGate) taintOnReturn(req *Request, src string, resp *Response) *Response {
	if !taints(resp) {
		return resp
	}
	digest, err := lock.DigestStrict(resp.Result)
	if err != nil {
		digest = "invalid"
	}
	ev := taint.Event{Time: g.o.Now(), Server: req.Server, Source: src, Item: req.Item, Digest: digest}
	if err := g.o.Store.Taint(req.Session, ev); err != nil {
		why := fmt.Sprintf("mcpform withheld the result: it could not record that it taints this session: %v", err)
		g.audit(req, "deny", "taint not recorded", why)
		return g.refuse(req, why)
	}
	if err := g.audit(req, "taint", "tainted", "source "+src+" result "+digest); err != nil {
		return g.refuse(req, "mcpform withheld the result: it cannot write its audit log")
	}
	return resp
}

// taints reports whether a source's answer carries its content to the
// client: an error or an input_required result does not.
func taints(resp *Response) bool {
	return resp.Error == nil && resultType(resp.Result) != "input_required"
}

func resultType(res []byte) string {
	s, _ := stringValue(find(res, "resultType"))
	return s
}

// gateSink lets a sink call through when the session is clean or the user
// approved it: a call that goes to the server is answered through
// forwarded, one refused here through reply.
func (g *taintGate) gateSink(ctx context.Context, req *Request, next Handler, reply, forwarded Reply) {
	st, err := g.o.Store.Get(req.Session)
	if err != nil {
		why := fmt.Sprintf("mcpform cannot read this session's taint state: %v", err)
		g.audit(req, "deny", "taint state unreadable", why)
		reply(g.refuse(req, why+g.resetHint(req)), nil)
		return
	}
	switch {
	case !st.Tainted():
		next(ctx, g.withoutApproval(req), forwarded)
	case req.Modern:
		if r := g.modern(req, st); r != nil {
			reply(r, nil)
			return
		}
		next(ctx, g.withoutApproval(req), forwarded)
	default:
		// The round trip to the client may take as long as a person
		// does: it must not hold up the client's other messages.
		go func() {
			if r, err := g.legacy(ctx, req, st); r != nil || err != nil {
				reply(r, err)
				return
			}
			next(ctx, req, forwarded)
		}()
	}
}

// legacy asks with the proxy's own elicitation/create while the tools/call
// is pending; a nil Response and error mean approved.
func (g *taintGate) legacy(ctx context.Context, req *Request, st *taint.State) (*Response, error) {
	c := req.client
	if c == nil || !c.Declared("elicitation") {
		return g.deny(req, "no elicitation", "the client did not declare the elicitation capability, so mcpform cannot ask you to approve it"), nil
	}
	if err := g.audit(req, "approval", "asked", "elicitation/create"); err != nil {
		return g.refuse(req, "mcpform cannot write its audit log"), nil
	}
	answer, err := c.Ask(ctx, "elicitation/create", g.elicitation(req, st, false), g.o.Timeout)
	switch {
	case ctx.Err() != nil:
		g.audit(req, "approval", "cancelled", "the client cancelled the call")
		return nil, ctx.Err()
	case errors.Is(err, errNoAnswer):
		return g.deny(req, "timeout", fmt.Sprintf("nobody answered the approval request within %v", g.o.Timeout)), nil
	case err != nil:
		return g.deny(req, "approval failed", "the approval request failed: "+err.Error()), nil
	case answer.Error != nil:
		return g.deny(req, "approval failed", "the client answered the approval request with an error: "+escape.String(answer.Error.Message)), nil
	}
	if ok, why := approved(answer.Result); !ok {
		return g.deny(req, "declined", why), nil
	}
	if err := g.audit(req, "approval", "approved", "elicitation/create"); err != nil {
		return g.refuse(req, "mcpform cannot write its audit log"), nil
	}
	return nil, nil
}

// modern answers the first call with an input_required result carrying the
// elicitation and a sealed requestState, and verifies the retry: nil lets
// the retry through.
func (g *taintGate) modern(req *Request, st *taint.State) *Response {
	args := argsDigest(req.Arguments)
	rs, hasRS := stringValue(find(req.Params, "requestState"))
	if hasRS && strings.HasPrefix(rs, taint.StatePrefix) {
		key, err := g.o.Store.Key(req.Session)
		if err != nil {
			return g.deny(req, "taint state unreadable", "mcpform cannot read this session's key: "+err.Error())
		}
		c, err := taint.Unseal(key, rs)
		if err == nil {
			err = c.Check(req.Session, req.Server, req.Item, args, g.o.Now())
		}
		if err == nil {
			err = g.o.Store.Redeem(req.Session, c.Nonce, time.Unix(c.Expires, 0))
		}
		if err != nil {
			return g.deny(req, "requestState refused", "mcpform refused the requestState: "+err.Error())
		}
		answer := find(find(req.Params, "inputResponses"), approvalKey)
		if ok, why := approved(answer); !ok {
			return g.deny(req, "declined", why)
		}
		if err := g.audit(req, "approval", "approved", "input_required retry"); err != nil {
			return g.refuse(req, "mcpform cannot write its audit log")
		}
		if c.Carried && !g.carried.has(c.Nonce) {
			return g.deny(req, "continuation lost", "the answers this call continued with are gone (mcpform keeps them for the approval's lifetime, at most "+fmt.Sprint(maxCarried)+" at once): call the tool again")
		}
		return nil
	}
	caps := find(req.meta, mcp.MetaClientCapabilities)
	if find(caps, "elicitation") == nil {
		return g.deny(req, "no elicitation", "the client did not declare the elicitation capability, so mcpform cannot ask you to approve it")
	}
	continues := continuation(req.Params)
	key, err := g.o.Store.Key(req.Session)
	var state string
	if err == nil {
		var c taint.Claims
		if c, err = taint.NewClaims(req.Session, req.Server, req.Item, args, g.o.Now(), g.o.StateTTL); err == nil {
			c.Carried = continues != nil
			if state, err = taint.Seal(key, c); err == nil && continues != nil {
				g.carried.put(c.Nonce, continues, time.Unix(c.Expires, 0))
			}
		}
	}
	if err != nil {
		return g.deny(req, "approval failed", "mcpform could not prepare the approval request: "+err.Error())
	}
	if err := g.audit(req, "approval", "asked", "input_required"); err != nil {
		return g.refuse(req, "mcpform cannot write its audit log")
	}
	b := []byte(`{"resultType":"input_required","inputRequests":{"` + approvalKey + `":{"method":"elicitation/create","params":`)
	b = append(b, g.elicitation(req, st, continues != nil)...)
	b = append(b, `}},"requestState":`...)
	b = mcp.AppendQuoted(b, state)
	return &Response{Result: append(b, '}')}
}

// withoutApproval drops the proxy's own requestState and answer from a
// retry, so the server never sees them, and puts back what the approved
// call continued with (another party's requestState and the client's
// answers to it), kept when the approval was asked for. Another party's
// state passes through.
func (g *taintGate) withoutApproval(req *Request) *Request {
	rs, _ := stringValue(find(req.Params, "requestState"))
	if !strings.HasPrefix(rs, taint.StatePrefix) {
		return req
	}
	r := *req
	var continues []byte
	if key, err := g.o.Store.Key(req.Session); err == nil {
		if c, err := taint.Unseal(key, rs); err == nil && c.Carried {
			continues = g.carried.take(c.Nonce)
		}
	}
	r.Params = rewriteObject(nil, req.Params, func(m member) bool {
		return m.KeyIs("requestState") || m.KeyIs("inputResponses")
	}, continues)
	if token, _ := stringValue(find(r.Params, "requestState")); strings.HasPrefix(token, relayPrefix) {
		r.relayToken = token // the terminal redeems it (relay.go)
	}
	return &r
}

// continuation returns the members of a call's params that continue an
// earlier round of it (requestState and inputResponses, compact and joined
// by a comma), nil when it starts afresh or carries mcpform's own state.
func continuation(params []byte) []byte {
	rs := find(params, "requestState")
	if rs == nil {
		return nil
	}
	if s, _ := stringValue(rs); strings.HasPrefix(s, taint.StatePrefix) {
		return nil
	}
	b := append([]byte(`"requestState":`), compact(rs)...)
	if ir := find(params, "inputResponses"); ir != nil {
		b = append(append(b, `,"inputResponses":`...), compact(ir)...)
	}
	return b
}

// carried holds, by approval nonce, what the calls waiting for approval
// continue with, until the approval is redeemed or expires: too much to
// seal into a requestState, and needed only by this run, which the retry
// comes back to.
type carried struct {
	mu sync.Mutex
	m  map[string]carriedCall
}

type carriedCall struct {
	params  []byte
	expires time.Time
}

// maxCarried bounds the calls a run keeps continuations for: past it, the
// one that expires first is dropped (its approved retry is then refused).
const maxCarried = 64

func (c *carried) put(nonce string, params []byte, expires time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]carriedCall{}
	}
	now := time.Now()
	for n, cc := range c.m {
		if now.After(cc.expires) {
			delete(c.m, n)
		}
	}
	if len(c.m) >= maxCarried {
		first := ""
		for n, cc := range c.m {
			if first == "" || cc.expires.Before(c.m[first].expires) {
				first = n
			}
		}
		delete(c.m, first)
	}
	c.m[nonce] = carriedCall{params: params, expires: expires}
}

func (c *carried) has(nonce string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.m[nonce]
	return ok
}

func (c *carried) take(nonce string) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	cc := c.m[nonce]
	delete(c.m, nonce)
	return cc.params
}

// approved reads an ElicitResult: only "accept" with approve = true counts.
func approved(res []byte) (bool, string) {
	action, _ := stringValue(find(res, "action"))
	switch action {
	case "accept":
		if string(find(find(res, "content"), "approve")) == "true" {
			return true, ""
		}
		return false, "the approval was accepted without approve = true"
	case "decline":
		return false, "you declined the call"
	case "cancel":
		return false, "you cancelled the approval"
	case "":
		return false, "no answer to the approval request came with the call"
	}
	return false, "the approval answer was not understood: " + escape.String(clip(action, 40))
}

// elicitation builds the params of the proxy's elicitation/create;
// continues says the call continues an earlier round of it.
func (g *taintGate) elicitation(req *Request, st *taint.State, continues bool) []byte {
	var m strings.Builder
	fmt.Fprintf(&m, "mcpform: approve this call?\n\nServer: %s\nTool: %s\n", quoteVisible(req.Server), quoteVisible(req.Item))
	m.WriteString(describeArgs(req.Arguments))
	if continues {
		m.WriteString("It continues the call: the server asked for more input, and the client's answers go to the server with it.\n")
	}
	if ev, ok := st.First(); ok {
		fmt.Fprintf(&m, "\nThis session was tainted at %s by server %s, source %s", ev.Time.Format(time.RFC3339), quoteVisible(ev.Server), quoteVisible(ev.Source))
		if ev.Item != "" && ev.Item != ev.Source {
			fmt.Fprintf(&m, " (%s)", quoteVisible(ev.Item))
		}
		fmt.Fprintf(&m, ", result %s", ev.Digest)
		if n := len(st.Events) + st.Dropped; n > 1 {
			fmt.Fprintf(&m, ", and %d more source results since", n-1)
		}
		m.WriteString(".\n")
	}
	m.WriteString("Text from that source may be steering this call. Approve only if you asked for it.\n")
	fmt.Fprintf(&m, "After reviewing the session, clear it with: mcpform taint reset %s", req.Session)
	b := []byte(`{"message":`)
	b = mcp.AppendQuoted(b, m.String())
	b = append(b, `,"requestedSchema":{"type":"object","properties":{"approve":{"type":"boolean","title":"Approve this call","default":false}},"required":["approve"]}}`...)
	return b
}

// describeArgs lists the arguments, escaped and with values clipped, in
// name order.
func describeArgs(args []byte) string {
	var ms [16]member
	list := members(ms[:0], args)
	if len(list) == 0 {
		return "Arguments: none\n"
	}
	type kv struct{ k, v string }
	var kvs []kv
	for _, mb := range list {
		k, _ := stringValue(mb.Key)
		v := string(compact(mb.Value))
		if s, ok := stringValue(mb.Value); ok {
			v = s
		}
		kvs = append(kvs, kv{escape.String(clip(k, 64)), escape.String(clip(v, 200))})
	}
	sort.Slice(kvs, func(i, j int) bool { return kvs[i].k < kvs[j].k })
	var b strings.Builder
	b.WriteString("Arguments:\n")
	for i, e := range kvs {
		if i == 20 {
			fmt.Fprintf(&b, "  … and %d more\n", len(kvs)-20)
			break
		}
		fmt.Fprintf(&b, "  %s = %s\n", e.k, e.v)
	}
	return b.String()
}

func quoteVisible(s string) string { return `"` + escape.String(clip(s, 200)) + `"` }

// clip shortens s to at most n bytes, on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && s[i]&0xc0 == 0x80 {
		i--
	}
	return s[:i] + "… (truncated)"
}

// argsDigest is the digest the requestState binds: the arguments' RFC 8785
// form, so a reformatted but equal retry still matches.
func argsDigest(args []byte) string {
	if args == nil {
		args = []byte("{}")
	}
	d, err := lock.DigestStrict(args)
	if err != nil {
		return "invalid"
	}
	return d
}

// deny audits a refusal and returns it as a tool error.
func (g *taintGate) deny(req *Request, outcome, why string) *Response {
	g.audit(req, "approval", "refused: "+outcome, why)
	return g.refuse(req, "mcpform refused the call to "+quoteVisible(req.Item)+" on server "+quoteVisible(req.Server)+": "+why+g.resetHint(req))
}

func (g *taintGate) resetHint(req *Request) string {
	return fmt.Sprintf(". This client session (%s) read from a taint source, so its sink calls need your approval; see what tainted it with `mcpform taint list` and, once reviewed, clear it with `mcpform taint reset %s`", req.Session, req.Session)
}

// refuse answers a tools/call with a tool error the model sees; anything
// else (a resources/read or prompts/get source) with a JSON-RPC error.
func (g *taintGate) refuse(req *Request, why string) *Response {
	if req.Method == "tools/call" {
		return toolError(why)
	}
	return rpcError(mcp.CodeInternalError, why)
}

func (g *taintGate) audit(req *Request, event, outcome, detail string) error {
	if g.o.Audit == nil {
		return errors.New("no audit log")
	}
	return g.o.Audit.Write(&audit.Record{
		Session: req.Session, Server: req.Server, Event: event, Method: req.Method,
		ID: req.ID.String(), Item: req.Item, Args: audit.ArgDigests(req.Arguments), Outcome: outcome, Detail: detail,
	})
}
