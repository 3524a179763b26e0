package runtime

import (
	"context"
	"fmt"
	"sync"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/internal/jsonscan"
	"github.com/mcpform/mcpform/internal/mutation"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/mcp"
)

// tasksLink lets the task methods (tasks/get, tasks/result, tasks/cancel,
// tasks/list; enforce checked the lock declares them) name only the tasks
// this run's calls created: the task ids the server answered a
// task-augmented tools/call with. A task id the client did not get from
// this server through this run is refused, tasks/list shows only this run's
// tasks, and notifications/tasks/status is relayed only for them
// (serverside.go). tasks/result carries the tool's result, so from here on
// the request is about that tool (Kind, Item): the taint gate after it sees
// a source's result whichever way it arrives.
type tasksLink struct{ tasks *taskTable }

func (l tasksLink) wrap(next Handler) Handler {
	return func(ctx context.Context, req *Request, reply Reply) {
		switch req.Method {
		case "tools/call":
			if find(req.Params, "task") == nil {
				next(ctx, req, reply)
				return
			}
			next(ctx, req, func(resp *Response, err error) {
				if err == nil && resp != nil && resp.Error == nil && !resp.Refused {
					if id, ok := stringValue(find(find(resp.Result, "task"), "taskId")); ok {
						l.tasks.add(id, req.Item)
					}
				}
				reply(resp, err)
			})
		case "tasks/get", "tasks/result", "tasks/cancel":
			id, _ := stringValue(find(req.Params, "taskId"))
			tool, ok := l.tasks.tool(id)
			if !ok && !mutation.Off("taskids") {
				reply(rpcError(mcp.CodeInvalidParams, fmt.Sprintf("unknown task %q: mcpform passes on only the tasks this client's calls created through it", escape.String(id))), nil)
				return
			}
			if req.Method == "tasks/result" {
				about := *req // a copy: req is captured above, and must not move
				about.Kind, about.Item, about.HasItem = lock.Tools, tool, true
				next(ctx, &about, reply)
				return
			}
			next(ctx, req, reply)
		case "tasks/list":
			next(ctx, req, func(resp *Response, err error) {
				if err == nil && resp != nil && resp.Error == nil {
					resp = &Response{Result: l.tasks.filter(resp.Result)}
				}
				reply(resp, err)
			})
		default:
			next(ctx, req, reply)
		}
	}
}

// taskTable is the tasks one run created, by id, with the tool each runs.
type taskTable struct {
	mu   sync.Mutex
	byID map[string]string
}

// maxTasks bounds the table: past it, the oldest task is forgotten (its
// methods are then refused).
const maxTasks = 4096

// add records task id as tool's. An id already recorded keeps its first
// tool: a server that answers a later call with a task id it used before
// must not relabel a source's task as another tool's.
func (t *taskTable) add(id, tool string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byID == nil {
		t.byID = map[string]string{}
	}
	if _, ok := t.byID[id]; ok {
		return
	}
	if len(t.byID) >= maxTasks {
		for k := range t.byID { // any one: a run that made 4,096 tasks is past caring which
			delete(t.byID, k)
			break
		}
	}
	t.byID[id] = tool
}

func (t *taskTable) tool(id string) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tool, ok := t.byID[id]
	return tool, ok
}

// known reports whether raw (a JSON value) is the id of one of the run's
// tasks.
func (t *taskTable) known(raw []byte) bool {
	id, ok := stringValue(raw)
	if !ok {
		return false
	}
	_, ok = t.tool(id)
	return ok
}

// filter returns a tasks/list result with only the run's tasks in it.
func (t *taskTable) filter(res []byte) []byte {
	res = oneLine(res)
	var es [16][]byte
	list := []byte(`"tasks":[`)
	n := 0
	for _, e := range jsonscan.Elements(es[:0], find(res, "tasks")) {
		if t.known(find(e, "taskId")) {
			if n > 0 {
				list = append(list, ',')
			}
			list = append(list, e...)
			n++
		}
	}
	list = append(list, ']')
	return rewriteObject(nil, res, func(m member) bool { return m.KeyIs("tasks") }, list)
}
