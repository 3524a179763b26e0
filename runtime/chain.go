package runtime

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcpform/mcpform/mcp"
	"github.com/mcpform/mcpform/runtime/enforce"
)

// Request is one client request as the handler chain sees it. The proxy
// fills it from a strictly decoded message before the chain runs; handlers
// must treat it as read-only.
type Request struct {
	// ID is the client's id. It never goes upstream: the upstream handler
	// sends the request under an id of the proxy's own.
	ID mcp.ID
	// Call is what enforce checks: the method, the params as received
	// (strict JSON), and the locked item the request is about with its
	// arguments (the audit log records only their digests).
	enforce.Call
	// Session names the client session this run belongs to (SessionID):
	// every run process the same client started shares it.
	Session string
	// Server is the server's name in the lock.
	Server string
	// Modern is set when the request came in the 2026-07-28 envelope; the
	// response is shaped for that era.
	Modern bool

	// client is who sent the request: the taint gate asks it for
	// approval. meta is params._meta (nil when absent).
	client Client
	meta   []byte
	// logLevel is a 2026-07-28 request's io.modelcontextprotocol/logLevel
	// (a JSON string), nil when absent: the log messages it asks for.
	logLevel []byte
	// relayToken is the requestState of a retry that carries one of
	// mcpform's relay tokens (relay.go), read once here: the terminal
	// handler redeems or refuses it, and never sends it upstream.
	relayToken string
}

// Client is the client a request came from, as a link may need it while
// the request is pending: what it declared it supports (in initialize, or
// the latest 2026-07-28 envelope), and a request of mcpform's own to it,
// answered or given up on after timeout or when ctx ends (the client is
// then told to drop it). The taint gate's legacy approval is such a
// request.
type Client interface {
	Declared(capability string) bool
	Ask(ctx context.Context, method string, params []byte, timeout time.Duration) (*mcp.Message, error)
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
	// refused, or a result it withheld), so that the audit log tells it
	// from the server's errors.
	Refused bool
	// Withheld is the server's result that this tool error replaces, when
	// it broke the tool's locked outputSchema (chain_results.go): the
	// audit log records its digest.
	Withheld []byte
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

// Middleware wraps a Handler with one concern: a link of the chain.
type Middleware func(Handler) Handler

// chain builds the run's handler. This is THE order of the links, from the
// outside in; each has its file:
//
//  1. audit (chain_audit.go): queues the request's record, which is in the
//     audit log before anything leaves for the server or the client, and
//     the outcome after;
//  2. quarantine (chain_quarantine.go): waits while the surface is being
//     verified, then refuses everything with -32002 once definitional
//     drift was found, or with the reason once the server did not start;
//  3. enforce (chain_enforce.go, with package enforce): only locked items,
//     arguments checked against the locked input schema, unknown methods
//     refused;
//  4. tasks (chain_tasks.go): the task methods name only the tasks this
//     run's calls created, and tasks/result is about the task's tool;
//  5. results (chain_results.go, with package enforce): on the way back, a
//     tools/call result (a tasks/result too) of a tool with a locked
//     outputSchema must carry structuredContent that satisfies it, or is
//     withheld and replaced by a tool error;
//  6. Options.Middlewares, in order: the place of the taint gate
//     (taintgate.go). It comes after enforce, so it sees only calls that
//     would be forwarded: a user is never asked to approve a call that
//     enforce then refuses, and a refused source call taints nothing;
//  7. the terminal handler (serve.go): answers initialize,
//     server/discover, ping and the lists from the lock, and sends
//     everything else upstream.
func (p *proxy) chain(extra []Middleware) Handler {
	links := []Middleware{
		auditLink{log: p.audit, session: p.session, server: p.name, logf: p.logf}.wrap,
		quarantineLink{state: &p.state, wait: p.opts.StartTimeout + time.Second, view: p.view}.wrap,
		enforceLink{checker: p.checker}.wrap,
		tasksLink{tasks: &p.tasks}.wrap,
		resultsLink{checker: p.checker}.wrap,
	}
	return wrap(p.terminal, append(links, extra...)...)
}

// wrap wraps h in mws, the first outermost.
func wrap(h Handler, mws ...Middleware) Handler {
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
