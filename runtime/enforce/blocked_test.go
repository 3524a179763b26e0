package enforce

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpform/mcpform/lock"
)

func blockedEntry(t *testing.T) *lock.Entry {
	t.Helper()
	item := func(k lock.Kind, raw string) lock.Item {
		it, err := lock.NewItem(k, json.RawMessage(raw))
		if err != nil {
			t.Fatal(err)
		}
		return it
	}
	return &lock.Entry{
		Tools:             []lock.Item{item(lock.Tools, `{"name":"a","inputSchema":{"type":"object"}}`), item(lock.Tools, `{"name":"b","inputSchema":{"type":"object"}}`)},
		Prompts:           []lock.Item{item(lock.Prompts, `{"name":"p"}`)},
		Resources:         []lock.Item{item(lock.Resources, `{"uri":"file:///r","name":"r"}`)},
		ResourceTemplates: []lock.Item{item(lock.ResourceTemplates, `{"uriTemplate":"file:///x/{n}","name":"x"}`), item(lock.ResourceTemplates, `{"uriTemplate":"file:///y/{n}","name":"y"}`)},
	}
}

// TestBlocked: requests about a blocked item are refused naming it and
// saying it drifted; the others pass; an item the client's view does not
// hold (hidden by expose, or added by the server) is not told of.
func TestBlocked(t *testing.T) {
	view := blockedEntry(t)
	b := (*Blocked)(nil).Add([]lock.Drift{
		{Class: lock.Definitional, Field: "tools", Kind: lock.Tools, Key: "a", Action: '~'},
		{Class: lock.Definitional, Field: "prompts", Kind: lock.Prompts, Key: "p", Action: '-'},
		{Class: lock.Definitional, Field: "resourceTemplates", Kind: lock.ResourceTemplates, Key: "file:///x/{n}", Action: '~'},
		{Class: lock.Definitional, Field: "tools", Kind: lock.Tools, Key: "hidden", Action: '~'},
		{Class: lock.Definitional, Field: "tools", Kind: lock.Tools, Key: "new", Action: '+'},
		{Class: lock.Definitional, Field: "instructions", Action: '~'},
	})
	if b.Len() != 5 {
		t.Fatalf("Len = %d, want 5 (the instructions are no item)", b.Len())
	}
	item := func(method string, k lock.Kind, key string) *Call {
		return &Call{Method: method, Kind: k, Item: key, HasItem: true}
	}
	completion := func(ref string) *Call {
		return &Call{Method: "completion/complete", Params: json.RawMessage(`{"ref":` + ref + `}`)}
	}
	for _, c := range []struct {
		name string
		call *Call
		want string // "" passes
	}{
		{"changed tool", item("tools/call", lock.Tools, "a"), `tool "a": it drifted from mcp.lock (it changed on the live server)`},
		{"other tool", item("tools/call", lock.Tools, "b"), ""},
		{"removed prompt", item("prompts/get", lock.Prompts, "p"), `prompt "p": it drifted from mcp.lock (it is gone from the live server)`},
		{"resource", item("resources/read", lock.Resources, "file:///r"), ""},
		{"URI of a blocked template", item("resources/read", lock.Resources, "file:///x/1"), `resource template "file:///x/{n}"`},
		{"subscribe to it", item("resources/subscribe", lock.Resources, "file:///x/1"), `resource template "file:///x/{n}"`},
		{"URI of another template", item("resources/read", lock.Resources, "file:///y/1"), ""},
		{"URI of no template", item("resources/read", lock.Resources, "file:///z"), ""},
		{"hidden tool", item("tools/call", lock.Tools, "hidden"), ""},
		{"added tool", item("tools/call", lock.Tools, "new"), ""},
		{"completion of a blocked prompt", completion(`{"type":"ref/prompt","name":"p"}`), `prompt "p"`},
		{"completion of a blocked template", completion(`{"type":"ref/resource","uri":"file:///x/{n}"}`), `resource template "file:///x/{n}"`},
		{"completion of another template", completion(`{"type":"ref/resource","uri":"file:///y/{n}"}`), ""},
		{"no item", &Call{Method: "ping"}, ""},
	} {
		r := b.Check(c.call, view)
		switch {
		case c.want == "" && r != nil:
			t.Errorf("%s: refused: %s", c.name, r.Message)
		case c.want != "" && (r == nil || r.Code != CodeDrifted || r.Tool || !strings.Contains(r.Message, c.want)):
			t.Errorf("%s: %+v; want code %d and %q", c.name, r, CodeDrifted, c.want)
		}
	}
	// A URI that a blocked and an unblocked template both match passes.
	both := blockedEntry(t)
	both.ResourceTemplates[1].Key = "file:///{+p}"
	if r := b.Check(item("resources/read", lock.Resources, "file:///x/1"), both); r != nil {
		t.Errorf("a URI an unblocked template matches too: %s", r.Message)
	}
	// Without drops exactly the blocked items, and leaves e as it was.
	w := b.Without(blockedEntry(t))
	if len(w.Tools) != 1 || w.Tools[0].Key != "b" || len(w.Prompts) != 0 || w.Prompts == nil || len(w.Resources) != 1 || len(w.ResourceTemplates) != 1 {
		t.Errorf("Without = %+v", w)
	}
	var none *Blocked
	if none.Check(item("tools/call", lock.Tools, "a"), view) != nil || none.Len() != 0 || none.Has(lock.Tools, "a") {
		t.Error("a nil Blocked blocks something")
	}
}
