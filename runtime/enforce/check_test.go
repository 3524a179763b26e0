package enforce

import (
	"encoding/json"
	"testing"

	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/mcp"
)

// The task methods pass only when the lock declares them, each of list and
// cancel on its own; a task-augmented tools/call only when the lock says
// the server runs tools/call as a task.
func TestCheckTasks(t *testing.T) {
	entry := func(caps string) *Checker {
		it, err := lock.NewItem(lock.Tools, json.RawMessage(`{"name":"t","inputSchema":{"type":"object"}}`))
		if err != nil {
			t.Fatal(err)
		}
		return New(&lock.Entry{Capabilities: json.RawMessage(caps), Tools: []lock.Item{it}})
	}
	full := entry(`{"tools":{},"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}}`)
	bare := entry(`{"tools":{},"tasks":{}}`)
	none := entry(`{"tools":{}}`)
	call := func(method, params string) *Call {
		c := &Call{Method: method, Params: json.RawMessage(params)}
		if method == "tools/call" {
			c.Kind, c.Item, c.HasItem, c.Arguments = lock.Tools, "t", true, json.RawMessage(`{}`)
		}
		return c
	}
	for _, c := range []struct {
		name string
		k    *Checker
		call *Call
		code int64 // 0: passes
	}{
		{"get", full, call("tasks/get", `{"taskId":"a"}`), 0},
		{"get, bare tasks", bare, call("tasks/get", `{"taskId":"a"}`), 0},
		{"get, no tasks", none, call("tasks/get", `{"taskId":"a"}`), mcp.CodeMethodNotFound},
		{"get without an id", full, call("tasks/get", `{}`), mcp.CodeInvalidParams},
		{"result with a number id", full, call("tasks/result", `{"taskId":1}`), mcp.CodeInvalidParams},
		{"list", full, call("tasks/list", `{}`), 0},
		{"list not declared", bare, call("tasks/list", `{}`), mcp.CodeMethodNotFound},
		{"cancel not declared", bare, call("tasks/cancel", `{"taskId":"a"}`), mcp.CodeMethodNotFound},
		{"task-augmented call", full, call("tools/call", `{"name":"t","arguments":{},"task":{"ttl":1}}`), 0},
		{"task-augmented call, not declared", bare, call("tools/call", `{"name":"t","arguments":{},"task":{"ttl":1}}`), mcp.CodeInvalidParams},
		{"wrong-case task key", full, call("tools/call", `{"name":"t","arguments":{},"Task":{}}`), mcp.CodeInvalidParams},
	} {
		r := c.k.Check(c.call)
		switch {
		case c.code == 0 && r != nil:
			t.Errorf("%s: refused: %s", c.name, r.Message)
		case c.code != 0 && (r == nil || r.Code != c.code):
			t.Errorf("%s: %+v; want code %d", c.name, r, c.code)
		}
	}
}
