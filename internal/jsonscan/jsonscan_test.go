package jsonscan_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mcpform/mcpform/internal/jsonscan"
	"github.com/mcpform/mcpform/internal/strictjson"
)

func TestMembersAndFind(t *testing.T) {
	obj := []byte(` { "a" : 1 , "b\"c":"x\\\"y", "\u005fmeta": {"k":[1,{"z":"}"}]}, "n": null } `)
	ms := jsonscan.Members(nil, obj)
	if len(ms) != 4 {
		t.Fatalf("Members = %d members, want 4: %q", len(ms), ms)
	}
	if got := string(jsonscan.Find(obj, "_meta")); got != `{"k":[1,{"z":"}"}]}` {
		t.Errorf("jsonscan.Find(_meta) = %s", got)
	}
	if got := string(jsonscan.Find(obj, `b"c`)); got != `"x\\\"y"` {
		t.Errorf("jsonscan.Find(b\"c) = %s", got)
	}
	if jsonscan.Find(obj, "missing") != nil || jsonscan.Members(nil, []byte(`[1]`)) != nil {
		t.Error("Find or Members invented something")
	}
	els := jsonscan.Elements(nil, []byte(`[ 1, "a,]", {"x":[2]} ,null]`))
	if len(els) != 4 || string(els[2]) != `{"x":[2]}` {
		t.Errorf("Elements = %q", els)
	}
}

// FuzzAppendUnquoted holds the scanner to encoding/json on every string
// strictjson accepts.
func FuzzAppendUnquoted(f *testing.F) {
	for _, s := range []string{`"plain"`, `"a\"b\\c\/\b\f\n\r\t"`, `"\u00e9\ud83d\ude00"`, `"\u0000"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if strictjson.Check(raw) != nil {
			return
		}
		raw = bytes.TrimSpace(raw)
		if raw[0] != '"' {
			return
		}
		var want string
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatalf("encoding/json refused %q: %v", raw, err)
		}
		if got := string(jsonscan.AppendUnquoted(nil, raw)); got != want {
			t.Fatalf("jsonscan.AppendUnquoted(%q) = %q, want %q", raw, got, want)
		}
		if end := jsonscan.SkipValue(raw, 0); end != len(raw) {
			t.Fatalf("jsonscan.SkipValue(%q) = %d, want %d", raw, end, len(raw))
		}
	})
}
