package enforce

import (
	"encoding/json"
	"slices"
	"strings"
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

// A tools/call result is checked against the locked outputSchema, under
// the same draft rules as the input schemas (2020-12 unless $schema says
// otherwise, nothing loaded from outside the schema); a tool without one,
// or with null, is not checked, and a tool error passes.
func TestCheckResult(t *testing.T) {
	var tools []lock.Item
	for _, raw := range []string{
		`{"name":"plain","inputSchema":{"type":"object"}}`,
		`{"name":"nulled","inputSchema":{"type":"object"},"outputSchema":null}`,
		`{"name":"count","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"n":{"type":"integer","minimum":0}},"required":["n"]}}`,
		`{"name":"list","inputSchema":{"type":"object"},"outputSchema":{"type":"array","items":{"type":"string"}}}`,
		// draft-07: items as an array is a tuple; 2020-12 would refuse the schema (items must be a schema).
		`{"name":"pair","inputSchema":{"type":"object"},"outputSchema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","items":[{"type":"string"},{"type":"integer"}],"additionalItems":false}}`,
		// 2020-12 by default: prefixItems.
		`{"name":"pair2020","inputSchema":{"type":"object"},"outputSchema":{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":false}}`,
		`{"name":"remote","inputSchema":{"type":"object"},"outputSchema":{"$ref":"https://example.com/schema.json"}}`,
	} {
		it, err := lock.NewItem(lock.Tools, json.RawMessage(raw))
		if err != nil {
			t.Fatal(err)
		}
		tools = append(tools, it)
	}
	slices.SortFunc(tools, func(a, b lock.Item) int { return strings.Compare(a.Key, b.Key) }) // as a sealed entry's
	k := New(&lock.Entry{Capabilities: json.RawMessage(`{"tools":{}}`), Tools: tools})
	for _, c := range []struct {
		tool, result string
		refused      string // "" passes; else a part of the refusal
	}{
		{"plain", `{"content":[]}`, ""},
		{"plain", `{"content":[],"structuredContent":"anything"}`, ""},
		{"nulled", `{"content":[]}`, ""},
		{"count", `{"content":[],"structuredContent":{"n":3}}`, ""},
		{"count", `{"content":[],"structuredContent":{"n":3,"extra":true}}`, ""}, // JSON Schema: open
		{"count", `{"content":[],"structuredContent":{"n":-1}}`, "at '/n'"},
		{"count", `{"content":[],"structuredContent":{"n":1.5}}`, "want integer"},
		{"count", `{"content":[],"structuredContent":null}`, "does not match the locked output schema"},
		{"count", `{"content":[]}`, "no structuredContent"},
		{"count", `{"content":[{"type":"text","text":"boom"}],"isError":true}`, ""},
		{"count", `{"content":[],"isError":false}`, "no structuredContent"},
		{"count", `{"content":[],"isError":true,"ISERROR":false,"structuredContent":{"n":"x"}}`, "differ only in case"},
		{"count", `{"content":[],"structuredContent":{"n":1,"N":-1}}`, "differ only in case"},
		{"count", ` { "content" : [ ] , "structuredContent" : { "n" : 2 } } `, ""},
		{"list", `{"content":[],"structuredContent":["a","b"]}`, ""},
		{"list", `{"content":[],"structuredContent":["a",1]}`, "at '/1'"},
		{"pair", `{"content":[],"structuredContent":["a",1]}`, ""},
		{"pair", `{"content":[],"structuredContent":["a",1,2]}`, "does not match"},
		{"pair2020", `{"content":[],"structuredContent":["a",1]}`, ""},
		{"pair2020", `{"content":[],"structuredContent":[1,"a"]}`, "does not match"},
		{"remote", `{"content":[],"structuredContent":{}}`, "which mcpform does not load"},
	} {
		r := k.CheckResult(c.tool, json.RawMessage(c.result))
		switch {
		case c.refused == "" && r != nil:
			t.Errorf("%s %s: withheld: %s", c.tool, c.result, r.Message)
		case c.refused != "" && r == nil:
			t.Errorf("%s %s: passed; want it withheld (%s)", c.tool, c.result, c.refused)
		case r != nil && (!r.Tool || !strings.Contains(r.Message, c.refused) || !strings.HasPrefix(r.Message, `mcpform withheld the result of "`+c.tool+`"`)):
			t.Errorf("%s %s: %+v; want a tool error naming the tool and %q", c.tool, c.result, r, c.refused)
		}
		if has := k.HasOutputSchema(c.tool); has != (c.tool != "plain" && c.tool != "nulled") {
			t.Errorf("HasOutputSchema(%s) = %v", c.tool, has)
		}
	}
	// A long string that breaks a pattern is clipped in the message.
	it, _ := lock.NewItem(lock.Tools, json.RawMessage(`{"name":"p","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"s":{"pattern":"^a$"}}}}`))
	k = New(&lock.Entry{Tools: []lock.Item{it}})
	r := k.CheckResult("p", json.RawMessage(`{"structuredContent":{"s":"`+strings.Repeat("x", 100000)+`"}}`))
	if r == nil || len(r.Message) > 600 || !strings.Contains(r.Message, "clipped") {
		t.Errorf("a long violation: %v", r)
	}
}

// BenchmarkCheckResult is the output schema check of one structured result
// (the schema compiled once, before the loop), as the results link makes it.
func BenchmarkCheckResult(b *testing.B) {
	it, err := lock.NewItem(lock.Tools, json.RawMessage(`{"name":"t","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"count":{"type":"integer","minimum":0},"label":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}}},"required":["count","label"]}}`))
	if err != nil {
		b.Fatal(err)
	}
	k := New(&lock.Entry{Tools: []lock.Item{it}})
	res := json.RawMessage(`{"content":[{"type":"text","text":"{\"count\":2,\"label\":\"hello\",\"tags\":[\"a\",\"b\"]}"}],"structuredContent":{"count":2,"label":"hello","tags":["a","b"]}}`)
	if r := k.CheckResult("t", res); r != nil {
		b.Fatal(r.Message)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if k.CheckResult("t", res) != nil {
			b.Fatal("withheld")
		}
	}
}
