package runtime

import (
	"fmt"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/mcp"
	"github.com/mcpform/mcpform/runtime/audit"
)

// A 2026-07-28 server does not send the client requests of its own: it
// answers a call with resultType "input_required" and the requests in
// inputRequests ({"key": {"method": "sampling/createMessage", "params": …}}),
// and the client retries the call with the answers. That is the same
// sampling, elicitation and roots as a legacy server's requests, and passes
// under the same rule (mayAskClient in serverside.go; docs/GUARANTEES.md,
// section 3).

// checkInputRequests returns the refusal for a server result that asks the
// client for input it may not ask for, or nil.
func (p *proxy) checkInputRequests(req *Request, result []byte) *Response {
	if rt, _ := stringValue(find(result, "resultType")); rt != "input_required" {
		return nil
	}
	var ms [16]member
	list := members(ms[:0], find(result, "inputRequests"))
	if len(list) == 0 {
		return p.denyInput(req, "input_required", "the server asked for input without naming a request")
	}
	for _, m := range list {
		method, _ := stringValue(find(m.Value, "method"))
		why := p.mayAskClient(method)
		if why != "" {
			return p.denyInput(req, method, why)
		}
	}
	return nil
}

func (p *proxy) denyInput(req *Request, method, why string) *Response {
	_ = p.record(&audit.Record{Event: "deny", Method: method, ID: req.ID.String(), Item: req.Item, Detail: "input_required: " + why})
	p.warnf("denied the server's %s request (input_required): %s", method, why)
	return rpcError(mcp.CodeInternalError, fmt.Sprintf("mcpform denied the server's %s request: %s", escape.String(method), why))
}
