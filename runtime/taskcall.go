package runtime

import (
	"context"

	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/mcp"
)

// A 2026-07-28 client cannot ask for a task: that era's tools/call has no
// task member and its tools no execution. A legacy server refuses every
// call of a tool whose taskSupport is "required" that is not
// task-augmented, so such a tool would work direct for a legacy client and
// never through mcpform for a modern one. mcpform runs the call as a task
// on the client's behalf: it adds task to the call upstream, waits for the
// task's result (tasks/result), and answers the client's call with it.
// The task is mcpform's own: it is not in the run's task table, so the
// client can neither list nor name it. A client that cancels the call
// cancels the task (tasks/cancel).

// taskRequired returns the locked tools a legacy server runs only as tasks,
// when the lock says it takes task-augmented tools/call; nil otherwise.
func taskRequired(e *lock.Entry) map[string]bool {
	if e.Modern() || find(find(find(find(compact(e.Capabilities), "tasks"), "requests"), "tools"), "call") == nil {
		return nil
	}
	var required map[string]bool
	for _, it := range e.Tools {
		if s, _ := stringValue(find(find(compact(it.JSON), "execution"), "taskSupport")); s == "required" {
			if required == nil {
				required = map[string]bool{}
			}
			required[it.Key] = true
		}
	}
	return required
}

// asTask reports whether mcpform runs req as a task on the client's behalf.
func (p *proxy) asTask(req *Request) bool {
	return req.Modern && req.Method == "tools/call" && p.served.taskRequired[req.Item] && find(req.Params, "task") == nil
}

// sendAsTask sends req upstream as a task-augmented call, then asks for
// the task's result, which answers req.
func (p *proxy) sendAsTask(ctx context.Context, req *Request, reply Reply) {
	params := req.Params
	if params == nil {
		params = []byte("{}")
	}
	params = rewriteObject(nil, oneLine(params), func(m member) bool { return m.KeyIs("task") }, []byte(`"task":{}`))
	p.send(ctx, req, params, 0, func(resp *Response, err error) {
		if err != nil || resp == nil || resp.Error != nil || resp.Refused {
			reply(resp, err)
			return
		}
		id, ok := stringValue(find(find(resp.Result, "task"), "taskId"))
		if !ok {
			reply(rpcError(mcp.CodeInternalError, "the server answered a task-augmented call without a task id"), nil)
			return
		}
		// Not on the server's reader, which the request's write could wait on.
		go p.taskResult(ctx, id, reply)
	})
}

// taskResult waits for task id's result and answers the client's call with
// it; when the client cancelled the call, the task is cancelled too.
func (p *proxy) taskResult(ctx context.Context, id string, reply Reply) {
	params := append(mcp.AppendQuoted([]byte(`{"taskId":`), id), '}')
	p.up.Request(ctx, "tasks/result", params, "", true, p.opts.RequestTimeout, func(m *mcp.Message, err error) {
		switch {
		case err != nil:
			if ctx.Err() != nil {
				p.up.Request(context.Background(), "tasks/cancel", params, "", false, p.opts.StartTimeout, func(*mcp.Message, error) {})
			}
			reply(p.unanswered(ctx, err))
		case m.Error != nil:
			reply(&Response{Error: m.Error}, nil)
		default:
			reply(&Response{Result: m.Result}, nil)
		}
	})
}
