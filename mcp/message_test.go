package mcp

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestDecodeMessage(t *testing.T) {
	tests := []struct {
		line string
		want *Message
		code int    // DecodeError code when want is nil
		id   ID     // DecodeError id
		msg  string // in the error
	}{
		{line: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, want: &Message{ID: "1", Method: "tools/list"}},
		{line: ` {"jsonrpc":"2.0","id":"a\u0062","method":"x","params":{"a":1}} `, want: &Message{ID: `"ab"`, Method: "x", Params: json.RawMessage(`{"a":1}`)}},
		{line: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, want: &Message{Method: "notifications/initialized"}},
		{line: `{"jsonrpc":"2.0","id":-7,"result":{}}`, want: &Message{ID: "-7", Result: json.RawMessage(`{}`)}},
		{line: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`, want: &Message{Error: &RPCError{Code: -32700, Message: "Parse error"}}},
		{line: `{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"nope","data":[1]}}`, want: &Message{ID: "3", Error: &RPCError{Code: -32601, Message: "nope", Data: json.RawMessage(`[1]`)}}},

		{line: `not json`, code: CodeParseError, msg: "not JSON"},
		{line: `{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}`, code: CodeParseError, msg: `duplicate key "method"`},
		{line: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"x":1,"x":2}}}`, code: CodeParseError, msg: `duplicate key "x"`},
		{line: `{"jsonrpc":"2.0","id":1,"method":"a","\u006dethod":"b"}`, code: CodeParseError, msg: "duplicate key"},
		{line: `[{"jsonrpc":"2.0","id":1,"method":"a"}]`, code: CodeInvalidRequest, msg: "batches are not allowed"},
		{line: `"hello"`, code: CodeInvalidRequest, msg: "must be a JSON object"},
		{line: `{"jsonrpc":"2.0","id":1,"Method":"tools/list"}`, code: CodeInvalidRequest, id: "1", msg: `unknown member "Method"`},
		{line: `{"JSONRPC":"2.0","id":1,"method":"tools/list"}`, code: CodeInvalidRequest, id: "1", msg: `unknown member "JSONRPC"`},
		{line: `{"id":1,"method":"tools/list"}`, code: CodeInvalidRequest, id: "1", msg: `"jsonrpc" must be "2.0"`},
		{line: `{"jsonrpc":"1.0","id":1,"method":"tools/list"}`, code: CodeInvalidRequest, id: "1", msg: `"jsonrpc" must be "2.0"`},
		{line: `{"jsonrpc":"2.0","id":1.5,"method":"a"}`, code: CodeInvalidRequest, msg: "id must be a string or an integer"},
		{line: `{"jsonrpc":"2.0","id":{},"method":"a"}`, code: CodeInvalidRequest, msg: "id must be"},
		{line: `{"jsonrpc":"2.0","id":null,"method":"a"}`, code: CodeInvalidRequest, msg: "must not be null"},
		{line: `{"jsonrpc":"2.0","id":1,"method":""}`, code: CodeInvalidRequest, id: "1", msg: "non-empty string"},
		{line: `{"jsonrpc":"2.0","id":1,"method":7}`, code: CodeInvalidRequest, id: "1", msg: "non-empty string"},
		{line: `{"jsonrpc":"2.0","id":1,"method":"a","params":[1]}`, code: CodeInvalidRequest, id: "1", msg: "params must be an object"},
		{line: `{"jsonrpc":"2.0","id":1,"method":"a","result":{}}`, code: CodeInvalidRequest, id: "1", msg: "must not carry result"},
		{line: `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":""}}`, code: CodeInvalidRequest, id: "1", msg: "both result and error"},
		{line: `{"jsonrpc":"2.0","id":1,"result":[]}`, code: CodeInvalidRequest, id: "1", msg: "result must be an object"},
		{line: `{"jsonrpc":"2.0","result":{}}`, code: CodeInvalidRequest, msg: "needs an id"},
		{line: `{"jsonrpc":"2.0","id":1}`, code: CodeInvalidRequest, id: "1", msg: "needs a method, a result or an error"},
		{line: `{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":""}}`, code: CodeInvalidRequest, id: "1", msg: "code must be an integer"},
		{line: `{"jsonrpc":"2.0","id":1,"error":{"code":1}}`, code: CodeInvalidRequest, id: "1", msg: "needs a message"},
		{line: `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"","Code":2}}`, code: CodeInvalidRequest, id: "1", msg: `unknown member "Code" in error`},
		{line: `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":""},"params":{}}`, code: CodeInvalidRequest, id: "1", msg: "must not carry params"},
		{line: "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\xff\"}", code: CodeParseError, msg: "UTF-8"},
		{line: strings.Repeat("[", 200) + strings.Repeat("]", 200), code: CodeParseError, msg: "nesting"},
	}
	for _, tt := range tests {
		got, err := DecodeMessage([]byte(tt.line))
		if tt.want != nil {
			if err != nil {
				t.Errorf("DecodeMessage(%s): %v", tt.line, err)
				continue
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("DecodeMessage(%s) (-want +got):\n%s", tt.line, d)
			}
			continue
		}
		var de *DecodeError
		if !errors.As(err, &de) {
			t.Errorf("DecodeMessage(%s) = %+v, %v; want a *DecodeError", tt.line, got, err)
			continue
		}
		if de.Code != tt.code || de.ID != tt.id || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("DecodeMessage(%s) = code %d id %q %q; want code %d id %q and %q", tt.line, de.Code, de.ID, err, tt.code, tt.id, tt.msg)
		}
	}
}

func TestAppendMessageRoundTrip(t *testing.T) {
	msgs := []*Message{
		{ID: "1", Method: "tools/call", Params: json.RawMessage("{\n  \"name\": \"a\"\n}")},
		{Method: "notifications/cancelled", Params: json.RawMessage(`{"requestId":1}`)},
		{ID: `"x\"y"`, Result: json.RawMessage(`{"tools":[]}`)},
		{ID: "2", Error: &RPCError{Code: -32002, Message: "quarantined:\n\"tool\" changed", Data: json.RawMessage(`{"a":1}`)}},
		{Error: &RPCError{Code: CodeParseError, Message: "Parse error"}},
		{ID: StringID("a\x00b"), Result: json.RawMessage(`{}`)},
	}
	for _, m := range msgs {
		b, err := AppendMessage(nil, m)
		if err != nil {
			t.Fatal(err)
		}
		if strings.ContainsAny(string(b), "\n\r") {
			t.Errorf("frame holds a line break: %q", b)
		}
		var w strings.Builder
		if err := writeMessage(&w, m); err != nil || w.String() != string(b)+"\n" {
			t.Errorf("writeMessage = %q, %v; want %q", w.String(), err, string(b)+"\n")
		}
		got, err := DecodeMessage(b)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		want := *m
		if want.Params != nil {
			want.Params = got.Params // compacted
			if !jsonEqual(m.Params, got.Params) {
				t.Errorf("params %s, want %s", got.Params, m.Params)
			}
		}
		if d := cmp.Diff(&want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", b, d)
		}
	}
}

func TestIDCanonical(t *testing.T) {
	for raw, want := range map[string]ID{
		`"abc"`:              `"abc"`,
		`"a\u0062c"`:         `"abc"`,
		`"\/"`:               `"/"`,
		`"\u2028<"`:          "\"\u2028<\"",
		`"q\"\\"`:            `"q\"\\"`,
		`12`:                 `12`,
		`-3`:                 `-3`,
		`"\u0001"`:           `"\u0001"`,
		`"` + "\u00e9" + `"`: `"` + "\u00e9" + `"`,
	} {
		got, ok := parseID(json.RawMessage(raw))
		if !ok || got != want {
			t.Errorf("parseID(%s) = %s, %v; want %s", raw, got, ok, want)
		}
	}
	for _, raw := range []string{`1.0`, `1e3`, `-`, `true`, `null`, `[1]`} {
		if id, ok := parseID(json.RawMessage(raw)); ok {
			t.Errorf("parseID(%s) = %s, want refusal", raw, id)
		}
	}
}

func TestEnvelope(t *testing.T) {
	env := envelope{ProtocolVersion: ModernVersion, ClientInfo: json.RawMessage(`{"name":"mcpform","version":"1"}`)}
	got, err := env.Apply(json.RawMessage(`{"name":"echo","_meta":{"progressToken":7}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"mcpform","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":7},"name":"echo"}`
	if string(got) != want {
		t.Errorf("Apply = %s\nwant    %s", got, want)
	}
	back, ok, err := readEnvelope(got)
	if err != nil || !ok {
		t.Fatalf("readEnvelope: %v %v", ok, err)
	}
	if d := cmp.Diff(envelope{ProtocolVersion: ModernVersion, ClientCapabilities: json.RawMessage(`{}`), ClientInfo: env.ClientInfo}, back); d != "" {
		t.Errorf("readEnvelope (-want +got):\n%s", d)
	}
	if _, ok, err := readEnvelope(json.RawMessage(`{"name":"x"}`)); ok || err != nil {
		t.Errorf("legacy params: ok %v err %v", ok, err)
	}
	if _, _, err := readEnvelope(json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":1}}`)); err == nil {
		t.Error("a number as protocol version was accepted")
	}
	if got, err := env.Apply(nil); err != nil || !strings.HasPrefix(string(got), `{"_meta":{`) {
		t.Errorf("Apply(nil) = %s, %v", got, err)
	}

	res, err := setResultServerInfo(json.RawMessage(`{"tools":[],"_meta":{"x":1}}`), json.RawMessage(`{"name":"s","version":"2"}`))
	if err != nil {
		t.Fatal(err)
	}
	info, err := resultServerInfo(res)
	if err != nil || string(info) != `{"name":"s","version":"2"}` {
		t.Errorf("resultServerInfo = %s, %v", info, err)
	}
	dropped, err := dropFields(res, volatileResultFields...)
	if err != nil || string(dropped) != `{"tools":[]}` {
		t.Errorf("dropFields = %s, %v", dropped, err)
	}
}

func TestParseEra(t *testing.T) {
	for _, e := range []Era{EraAuto, EraLegacy, EraModern} {
		got, err := ParseEra(e.String())
		if err != nil || got != e {
			t.Errorf("ParseEra(%q) = %v, %v", e.String(), got, err)
		}
	}
	if _, err := ParseEra("modern"); err == nil {
		t.Error(`ParseEra("modern") succeeded`)
	}
}

// FuzzAppendQuoted: every string comes out as the JSON string that
// encoding/json reads back as the same bytes (valid UTF-8 input).
func FuzzAppendQuoted(f *testing.F) {
	for _, s := range []string{"", "plain", `a"b\c`, "tab\tnew\nline\x00\x1f", "ünïcødé ✓", "\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		b := AppendQuoted([]byte("x"), s)
		if b[0] != 'x' {
			t.Fatalf("the prefix was overwritten: %q", b)
		}
		var got string
		if err := json.Unmarshal(b[1:], &got); err != nil {
			t.Fatalf("AppendQuoted(%q) = %s, not a JSON string: %v", s, b[1:], err)
		}
		if got != s {
			t.Fatalf("AppendQuoted(%q) reads back as %q", s, got)
		}
	})
}
