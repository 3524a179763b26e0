package runtime

import (
	"context"

	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/runtime/enforce"
)

// resultsLink checks the server's answer to a tools/call against the lock
// before it goes back out (package enforce decides: CheckResult). A tool
// whose locked definition has an outputSchema must answer with
// structuredContent that satisfies it; a result that does not is withheld,
// and the client gets a tool error of mcpform's own in its place, under its
// own id (the audit link records the outcome "withheld"). A tool error
// (isError) passes as the server sent it, and so does an input_required
// result (2026-07-28), which is no result yet: the retry that continues the
// call is checked when it is answered. tasks/result is about its task's
// tool (the tasks link, before this one, made it so), so a task's result is
// checked as its tool's; the answer to a task-augmented call that carries a
// task (CreateTaskResult) is not the tool's result, and is not checked. The
// server is not quarantined for it: its surface did not change.
//
// The link comes after tasks and before Options.Middlewares: the taint gate
// sees the server's own result (a withheld source result still taints the
// session, since the tool error quotes the first violation, and with it
// the server's data).
type resultsLink struct{ checker *enforce.Checker }

func (l resultsLink) wrap(next Handler) Handler {
	return func(ctx context.Context, req *Request, reply Reply) {
		if (req.Method != "tools/call" && req.Method != "tasks/result") || !req.HasItem || req.Kind != lock.Tools || !l.checker.HasOutputSchema(req.Item) {
			next(ctx, req, reply)
			return
		}
		asTask := req.Method == "tools/call" && find(req.Params, "task") != nil
		next(ctx, req, func(resp *Response, err error) {
			// CheckResult passes an input_required result itself.
			if err == nil && resp != nil && resp.Error == nil && !resp.Refused && !(asTask && find(resp.Result, "task") != nil) {
				if r := l.checker.CheckResult(req.Item, resp.Result); r != nil {
					resp = withheld(r, resp.Result)
				}
			}
			reply(resp, err)
		})
	}
}

// withheld is the tool error that replaces a result CheckResult refused.
func withheld(r *enforce.Refusal, result []byte) *Response {
	resp := toolError(r.Message)
	resp.Withheld = result
	return resp
}
