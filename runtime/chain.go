package runtime

import (
	"context"
	"encoding/json"

	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/mcp"
)

// Request is one client request as the handler chain sees it. The proxy
// fills it from a strictly decoded message before the chain runs; handlers
// must treat it as read-only.
type Request struct {
	// ID is the client's id. It never goes upstream: the upstream handler
	// sends the request under an id of the proxy's own.
	ID     mcp.ID
	Method string
	// Params are the params as received (strict JSON: no duplicate keys),
	// nil when absent.
	Params json.RawMessage
	// Session names the client session this run belongs to (SessionID):
	// every run process the same client started shares it.
	Session string
	// Server is the server's name in the lock.
	Server string
	// Modern is set when the request came in the 2026-07-28 envelope; the
	// response is shaped for that era.
	Modern bool

	// Kind and Item name the locked item the request is about, for
	// tools/call and prompts/get (the name), resources/read and
	// resources/(un)subscribe (the URI); HasItem is false otherwise.
	Kind    lock.Kind
	Item    string
	HasItem bool
	// Arguments are the tools/call or prompts/get arguments as received
	// (nil when absent). The audit log records only their digests.
	Arguments json.RawMessage

	// proxy is the run serving the request: the taint gate asks the
	// client through it. meta is params._meta (nil when absent).
	proxy *proxy
	meta  []byte
}

// Response is what a handler answers: a result or a JSON-RPC error.
type Response struct {
	// Result is the result object. Unless Final is set, the proxy shapes it
	// for the client's era on the way out (resultType, ttlMs, cacheScope and
	// the locked serverInfo for a 2026-07-28 client; none of them for a
	// legacy one).
	Result json.RawMessage
	Final  bool
	Error  *mcp.RPCError
	// Refused marks a tool error result mcpform wrote itself (a call it
	// refused), so that the audit log tells it from the server's errors.
	Refused bool
}

// Reply delivers a request's outcome, exactly once: a Response, or an error
// for an internal failure (answered with -32603; ctx's error when the
// client cancelled, which gets no answer at all).
type Reply func(*Response, error)

// Handler handles one client request and calls reply exactly once: before
// it returns (an answer from the lock, a refusal), or later on another
// goroutine (the server's answer is delivered on the goroutine that reads
// the server, so it reaches the client with no hand-off). Handlers run on
// the goroutine that reads the client: one that must wait for someone (an
// approval, the end of a verification) does so on a goroutine of its own.
type Handler func(ctx context.Context, req *Request, reply Reply)

// Middleware wraps a Handler with one concern.
//
// The proxy's chain is, from the outside in:
//
//  1. audit: queues the request's record, which is in the audit log before
//     anything leaves for the server or the client, and the outcome after;
//  2. quarantine: waits while the surface is being verified, then refuses
//     everything with -32002 once definitional drift was found;
//  3. Options.Middlewares, in order: the place of the taint gate, which
//     needs to see only requests that survived quarantine and to run before
//     anything reaches the server;
//  4. enforce: only locked items, arguments checked against the locked
//     input schema, unknown methods refused;
//  5. the terminal handler: answers initialize, server/discover, ping and
//     the lists from the lock, and sends everything else upstream.
type Middleware func(Handler) Handler

// chain wraps h in mws, the first outermost.
func chain(h Handler, mws ...Middleware) Handler {
	for i := len(mws) - 1; i >= 0; i-- {
		if mws[i] != nil {
			h = mws[i](h)
		}
	}
	return h
}

// rpcError is a Response carrying a JSON-RPC error.
func rpcError(code int64, msg string) *Response {
	return &Response{Error: &mcp.RPCError{Code: code, Message: msg}}
}

// CodeQuarantined is the error every request of a quarantined server gets
// once definitional drift was found (the mcp.lock format's drift classes:
// docs/LOCKFILE.md, docs/GUARANTEES.md section 4).
const CodeQuarantined = -32002

// CodeStartFailed is the error every request gets when the server did not
// start (it could not be run, exited, or did not answer the handshake in
// time): -32603, as for a server that exits mid-call. It is not
// CodeQuarantined, which means drift: a server that did not start showed
// no surface to compare.
const CodeStartFailed = mcp.CodeInternalError

// codeTimeout is the error for a request the server did not answer in time
// (the code the MCP SDKs use for a request timeout).
const codeTimeout = -32001
