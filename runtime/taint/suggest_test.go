package taint

import (
	"strings"
	"testing"

	"github.com/mcpform/mcpform/lock"
)

func TestSuggest(t *testing.T) {
	e := &lock.Entry{}
	for _, raw := range []string{
		`{"name":"fetch","inputSchema":{"type":"object"}}`,
		`{"name":"read_note","annotations":{"readOnlyHint":true,"openWorldHint":false},"inputSchema":{"type":"object"}}`,
		`{"name":"delete_note","annotations":{"readOnlyHint":false,"destructiveHint":true,"openWorldHint":false},"inputSchema":{"type":"object"}}`,
		`{"name":"search","annotations":{"readOnlyHint":true},"inputSchema":{"type":"object"}}`,
		`{"name":"evil\"] sinks = [\n${x}","inputSchema":{"type":"object"}}`,
	} {
		it, err := lock.NewItem(lock.Tools, []byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		e.Tools = append(e.Tools, it)
	}
	r, _ := lock.NewItem(lock.Resources, []byte(`{"uri":"file:///a","name":"a"}`))
	e.Resources = []lock.Item{r}
	got := map[string]Label{}
	for _, l := range Suggest(e) {
		got[l.Name] = l
	}
	for name, want := range map[string][2]bool{
		"fetch": {true, true}, "read_note": {false, false}, "delete_note": {false, true},
		"search": {true, true}, "resources:*": {true, false},
	} {
		if l := got[name]; l.Source != want[0] || l.Sink != want[1] {
			t.Errorf("%s: source %v sink %v, want %v", name, l.Source, l.Sink, want)
		}
	}
	hcl := RenderHCL("notes", Suggest(e))
	if !strings.Contains(hcl, `"evil\"] sinks = [\n$${x}"`) {
		t.Errorf("a hostile tool name was not quoted:\n%s", hcl)
	}
	for _, line := range strings.Split(hcl, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "sinks = [") && strings.Contains(line, "evil") {
			t.Errorf("a tool name wrote its own line: %q", line)
		}
	}
}
