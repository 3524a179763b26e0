package runtime

import (
	"context"

	"github.com/mcpform/mcpform/mcp"
	"github.com/mcpform/mcpform/runtime/enforce"
)

// localMethods are answered by the terminal handler from the lock: enforce
// lets them through, and the audit log records no outcome for them.
var localMethods = map[string]bool{
	"initialize": true, "server/discover": true, "ping": true,
	"tools/list": true, "prompts/list": true, "resources/list": true, "resources/templates/list": true,
}

// enforceLink lets through only what the lock allows (package enforce
// decides); what the terminal answers from the lock passes as it is.
type enforceLink struct{ checker *enforce.Checker }

func (l enforceLink) wrap(next Handler) Handler {
	return func(ctx context.Context, req *Request, reply Reply) {
		if !localMethods[req.Method] {
			if r := l.checker.Check(&req.Call); r != nil {
				reply(refusal(r), nil)
				return
			}
		}
		next(ctx, req, reply)
	}
}

// refusal is enforce's verdict as the client gets it.
func refusal(r *enforce.Refusal) *Response {
	if r.Tool {
		return toolError(r.Message)
	}
	return rpcError(r.Code, r.Message)
}

// toolError is a tools/call result the model sees: the MCP way to report a
// refused call as a tool error rather than a protocol error.
func toolError(text string) *Response {
	b := []byte(`{"content":[{"type":"text","text":`)
	b = mcp.AppendQuoted(b, text)
	b = append(b, `}],"isError":true}`...)
	return &Response{Result: b, Refused: true}
}
