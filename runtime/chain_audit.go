package runtime

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpform/mcpform/internal/mutation"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/mcp"
	"github.com/mcpform/mcpform/runtime/audit"
)

// auditLink is the outermost link: the request is in the audit log before
// anything else happens to it, and its outcome before the answer reaches
// the client.
type auditLink struct {
	log             *audit.Log
	session, server string
	logf            func(format string, args ...any)
}

func (l auditLink) wrap(next Handler) Handler {
	return func(ctx context.Context, req *Request, reply Reply) {
		rec := audit.Record{Event: "request", Method: req.Method, ID: req.ID.String()}
		if req.HasItem {
			rec.Item = req.Item
		}
		rec.Args = audit.ArgDigests(req.Arguments)
		rec.Session, rec.Server = l.session, l.server
		// Queued, not written: whatever the request causes leaves through
		// a writer that flushes the log first.
		if err := l.log.Queue(&rec); err != nil {
			l.logf("%v", err)
			reply(rpcError(mcp.CodeInternalError, "mcpform cannot write its audit log, so it lets nothing through"), nil)
			return
		}
		next(ctx, req, func(resp *Response, err error) {
			// Queued like the request: the client's stream commits the
			// log before the answer leaves, so a result the client got
			// has its outcome in the log, and one whose outcome cannot be
			// written stops the run instead of reaching the client.
			if out := l.outcome(req, rec.ID, rec.Item, resp, err); out != nil {
				if mutation.Off("outcomefirst") {
					go l.log.Write(out) // after the answer, as it once was
				} else if err := l.log.Queue(out); err != nil {
					l.logf("%v", err)
				}
			}
			reply(resp, err)
		})
	}
}

// outcome is the "result" record of a request, nil for one answered from
// the lock.
func (l auditLink) outcome(req *Request, id, item string, resp *Response, err error) *audit.Record {
	out := &audit.Record{Session: l.session, Server: l.server, Event: "result", Method: req.Method, ID: id, Item: item}
	switch {
	case err != nil:
		out.Outcome = "failed"
		if errors.Is(err, context.Canceled) {
			out.Outcome = "cancelled"
		}
	case resp.Error != nil:
		out.Outcome = fmt.Sprintf("error %d", resp.Error.Code)
	case localMethods[req.Method]:
		return nil
	case resp.Withheld != nil:
		// The server answered, and the answer broke the locked output
		// schema: its digest, never its content, is what the log keeps.
		out.Outcome = "withheld"
		digest, err := lock.DigestStrict(resp.Withheld)
		if err != nil {
			digest = "invalid"
		}
		out.Detail = "the result does not match the locked output schema; result " + digest
	case resp.Refused:
		out.Outcome = "refused"
	case string(find(resp.Result, "isError")) == "true":
		out.Outcome = "tool error"
	default:
		out.Outcome = "ok"
	}
	return out
}
