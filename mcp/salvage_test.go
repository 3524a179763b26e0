package mcp

import (
	"slices"
	"strings"
	"testing"
)

func TestAnswerIDs(t *testing.T) {
	big := strings.Repeat("x", 5000)
	for _, c := range []struct {
		name, head, tail string
		want             []ID
	}{
		{"id first, malformed later", `{"jsonrpc":"2.0","id":7,"result":{"a":}`, "", []ID{"7"}},
		{"string id", `{"jsonrpc":"2.0","id":"q-1","result":[}`, "", []ID{`"q-1"`}},
		{"id after the result", `{"result":{"content":[{"text":"` + big[:100], `` + big[:50] + `"}]},"jsonrpc":"2.0","id":12}`, []ID{"12"}},
		{"id last, cut head", `{"result":"` + big[:900], big[:100] + `","id":3}` + "\r", []ID{"3"}},
		{"nested id is not the answer's", `{"result":{"items":[{"id":99}]`, `{"id":98}]}}`, nil},
		{"nested id first, then the top-level one", `{"result":{"id":99},"jsonrpc":"2.0","id":4,"x":[`, "", []ID{"4"}},
		{"batch", `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{}}]`, "", []ID{"1", "2"}},
		{"deep nesting before the id", `{"result":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `,"id":5}`, "", []ID{"5"}},
		{"number cut by the head's end", `{"id":12`, "", nil},
		{"not an object", `garbage "id":3`, `garbage "id":3`, nil},
		{"id that is not an id", `{"id":{"a":1}}`, "", nil},
		{"empty", "", "", nil},
		{"a server request, refused", `{"jsonrpc":"2.0","id":3,"method":"roots/list","params":{},"params":{}}`, `"params":{},"id":3}`, nil},
		{"a server request, id first and method last", `{"id":3,"jsonrpc":"2.0","method":"x","a":[}`, "", nil},
		{"a batch of a request and an answer", `[{"id":1,"method":"ping"},{"id":2,"result":{}}]`, "", []ID{"2"}},
	} {
		if got := AnswerIDs([]byte(c.head), []byte(c.tail)); !slices.Equal(got, c.want) {
			t.Errorf("%s: AnswerIDs = %q, want %q", c.name, got, c.want)
		}
	}
}

// FuzzAnswerIDs reads arbitrary bytes as a refused line: it never panics,
// returns at most maxAnswerIDs ids, each of which parses as an id.
func FuzzAnswerIDs(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":7,"result":{"a":}`, `[{"id":1},{"id":"a\"b"}]`, `{"result":[[[[`, `,"id":3}`, `{"id":-0}`, `{"":"\`} {
		f.Add([]byte(s), []byte(s))
	}
	f.Fuzz(func(t *testing.T, head, tail []byte) {
		ids := AnswerIDs(head, tail)
		if len(ids) > maxAnswerIDs {
			t.Fatalf("%d ids", len(ids))
		}
		for _, id := range ids {
			if _, ok := parseID([]byte(id.String())); !ok {
				t.Fatalf("AnswerIDs returned %q, which is no id", id)
			}
		}
	})
}
