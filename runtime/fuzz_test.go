package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpform/mcpform/internal/fakemcp"
	"github.com/mcpform/mcpform/internal/strictjson"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/mcp"
	"github.com/mcpform/mcpform/runtime/audit"
)

// fuzzEntry is a small locked surface with every kind of item.
func fuzzEntry(tb testing.TB, modern bool) *lock.Entry {
	cfg := &fakeConfig{Spec: fakemcp.Spec{
		Tools:             []json.RawMessage{json.RawMessage(`{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}`), json.RawMessage(`{"name":"any","inputSchema":{"type":"object","additionalProperties":true}}`)},
		Prompts:           []json.RawMessage{json.RawMessage(`{"name":"greet","arguments":[{"name":"who","required":true}]}`)},
		Resources:         []json.RawMessage{json.RawMessage(`{"uri":"mem://a","name":"a"}`)},
		ResourceTemplates: []json.RawMessage{json.RawMessage(`{"uriTemplate":"file:///srv/{+path}","name":"f"}`)},
		Capabilities:      json.RawMessage(`{"tools":{},"prompts":{},"resources":{"subscribe":true},"completions":{},"logging":{}}`),
	}}
	if modern {
		cfg.Era = "modern"
	}
	return lockFor(tb, cfg, "x")
}

// FuzzProxyMessage drives the client→server message path without
// processes: strict decoding, the request's era and item, enforcement,
// the rewrite of params for the server, and the shaping of a result for
// the client. Whatever leaves the proxy must be one line of strict JSON (no
// duplicate keys), a valid JSON-RPC message, with the envelope keys only
// where the proxy put them.
func FuzzProxyMessage(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"progressToken":1,"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"any","arguments":{"x":[1,{"y":null}]},"\u005fmeta":{"io.modelcontextprotocol\/protocolVersion":"2026-07-28"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"file:///srv/a/b"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"greet","arguments":{"who":"x"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"greet"}}}`,
		`{"jsonrpc":"2.0","id":6,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":"x"}}`,
		`{"jsonrpc":"2.0","id":8,"method":"logging/setLevel","params":{"level":"info","_meta":{}}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","name":"evil"}}`,
	} {
		f.Add([]byte(s), []byte(`{"content":[{"type":"text","text":"x"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"live"},"k":1},"resultType":"complete"}`))
	}
	legacy, modern := fuzzEntry(f, false), fuzzEntry(f, true)
	f.Fuzz(func(t *testing.T, line, result []byte) {
		msg, err := mcp.DecodeMessage(line)
		if err != nil || !msg.IsRequest() {
			return
		}
		for _, e := range []*lock.Entry{legacy, modern} {
			p, err := newProxy(Options{Name: "fuzz", Entry: e, Audit: &audit.Log{}, Session: "s"})
			if err != nil {
				t.Fatal(err)
			}
			req, rpcErr := p.newRequest(msg)
			if rpcErr != nil {
				checkLine(t, mcp.AppendError(nil, msg.ID, rpcErr.Code, rpcErr.Message, rpcErr.Data))
				continue
			}
			final := func(ctx context.Context, req *Request, reply Reply) {
				if localMethods[req.Method] {
					p.terminal(ctx, req, reply)
					return
				}
				up := p.wrapUp(req.Params)
				if up != nil || p.modernUp {
					checkLine(t, mcp.AppendRequest(nil, mcp.IntID(1), req.Method, up))
					if p.modernUp && string(find(find(up, "_meta"), mcp.MetaProtocolVersion)) != `"2026-07-28"` {
						t.Fatalf("upstream params without the envelope's version: %s", up)
					}
				}
				if strictjson.Check(result) != nil || len(bytes.TrimSpace(result)) == 0 || bytes.TrimSpace(result)[0] != '{' {
					reply(&Response{Result: []byte("{}")}, nil)
					return
				}
				reply(&Response{Result: result}, nil)
			}
			var resp *Response
			enforceLink{checker: p.checker}.wrap(final)(context.Background(), req, func(r *Response, err error) {
				if err != nil {
					t.Fatal(err)
				}
				resp = r
			})
			if resp == nil {
				t.Fatal("the chain did not answer")
			}
			for _, modernClient := range []bool{false, true} {
				r := *req
				r.Modern = modernClient
				if resp.Error != nil {
					checkLine(t, mcp.AppendError(nil, r.ID, resp.Error.Code, resp.Error.Message, oneLineOrNil(resp.Error.Data)))
					continue
				}
				out, rerr := p.shapeResponse(nil, &r, resp)
				if rerr != nil {
					continue
				}
				checkLine(t, out)
				res := find(out, "result")
				if modernClient && !resp.Final && !bytes.Equal(find(find(res, "_meta"), mcp.MetaServerInfo), compact(e.ServerInfo)) {
					t.Fatalf("a modern result without the locked serverInfo: %s", out)
				}
			}
		}
	})
}

// checkLine asserts b is one newline-terminated strict JSON-RPC message.
func checkLine(t *testing.T, b []byte) {
	t.Helper()
	if len(b) == 0 || b[len(b)-1] != '\n' || bytes.Count(b, []byte("\n")) != 1 || bytes.IndexByte(b, '\r') >= 0 {
		t.Fatalf("not one line: %q", b)
	}
	if _, err := mcp.DecodeMessage(b[:len(b)-1]); err != nil {
		t.Fatalf("the proxy wrote an invalid message: %v: %s", err, b)
	}
}
