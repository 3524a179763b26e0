package strictjson

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

func TestCheckAccepts(t *testing.T) {
	for _, in := range []string{
		`{}`, `[]`, `null`, ` true `, `"x"`, `0`, `-0.5e+10`, `1E3`,
		`{"a":1,"b":{"a":2},"c":[{"a":1},{"a":2}]}`,
		`{"\u00e9":1,"é2":2}`,
		`"\ud83d\ude00"`,
		`{"a":"\"\\\/\b\f\n\r\t"}`,
	} {
		if err := Check([]byte(in)); err != nil {
			t.Errorf("Check(%s) = %v, want nil", in, err)
		}
	}
}

func TestCheckRefuses(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"name":"a","name":"b"}`, `duplicate key "name" at $`},
		{`{"name":"a","n\u0061me":"b"}`, `duplicate key "name"`},
		{`{"tools":[{"x":1},{"x":1,"y":2,"x":3}]}`, `duplicate key "x" at $["tools"][1]`},
		{`{"a":1}{}`, "unexpected data after"},
		{`{"a":1,}`, "expected a string key"},
		{`[1,]`, "invalid character"},
		{`01`, "unexpected data after"},
		{`1.`, "no digits after"},
		{`"a` + "\x01" + `"`, "control character"},
		{"\"\xff\"", "invalid UTF-8"},
		{`"\ud800"`, "lone UTF-16 surrogate"},
		{`"\x"`, "invalid escape"},
		{`nul`, "invalid literal"},
		{``, "unexpected end"},
		{strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1), "nesting deeper"},
	}
	for _, tt := range tests {
		err := Check([]byte(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Check(%q) = %v, want an error containing %q", tt.in, err, tt.want)
		}
	}
}

func TestManyKeysUseMap(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := range 40 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"k` + strconv.Itoa(i) + `":1`)
	}
	b.WriteString(`,"k0":2}`)
	if err := Check([]byte(b.String())); err == nil || !strings.Contains(err.Error(), `duplicate key "k0"`) {
		t.Fatalf("Check = %v, want duplicate k0", err)
	}
}

// FuzzCheck holds Check to encoding/json: whatever Check accepts, the
// standard library must parse too.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":null}]}`, `{"a":1,"a":2}`, `"\ud83d\ude00"`, `[-0.0e1]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if Check(data) == nil && !json.Valid(data) {
			t.Fatalf("Check accepted %q, which encoding/json rejects", data)
		}
	})
}

func BenchmarkCheck(b *testing.B) {
	item := `{"name":"tool","description":"Does a thing with a long enough description to matter.","inputSchema":{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer","enum":[1,2,3]}},"required":["a"]}}`
	data := []byte("[" + strings.Repeat(item+",", 999) + item + "]")
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := Check(data); err != nil {
			b.Fatal(err)
		}
	}
}
