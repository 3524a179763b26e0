package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpform/mcpform/internal/jsonscan"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestParamHeaders(t *testing.T) {
	got, err := ParamHeaders(json.RawMessage(`{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"opts":{"type":"object","properties":{"dry":{"type":"boolean","x-mcp-header":"Dry-Run"},"n":{"type":"integer","x-mcp-header":"N"}}},
		"x-mcp-header":{"type":"string"},
		"query":{"type":"string","default":{"x-mcp-header":"not a schema"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"Region": {"region"}, "Dry-Run": {"opts", "dry"}, "N": {"opts", "n"}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for _, h := range got {
		if d := cmp.Diff(want[h.Name], h.Path); d != "" {
			t.Errorf("%s: path (-want +got):\n%s", h.Name, d)
		}
	}
	if hs, err := ParamHeaders(json.RawMessage(`{"type":"object"}`)); hs != nil || err != nil {
		t.Errorf("a schema without annotations: %v, %v", hs, err)
	}
}

// The transport's rules: a tool whose annotations break one is invalid
// (and the probe leaves it out).
func TestParamHeadersRefuses(t *testing.T) {
	for name, schema := range map[string]string{
		"number":          `{"properties":{"x":{"type":"number","x-mcp-header":"X"}}}`,
		"object":          `{"properties":{"x":{"type":"object","x-mcp-header":"X"}}}`,
		"no type":         `{"properties":{"x":{"x-mcp-header":"X"}}}`,
		"empty":           `{"properties":{"x":{"type":"string","x-mcp-header":""}}}`,
		"space":           `{"properties":{"x":{"type":"string","x-mcp-header":"A B"}}}`,
		"CRLF":            `{"properties":{"x":{"type":"string","x-mcp-header":"A\r\nSet-Cookie: x"}}}`,
		"not a string":    `{"properties":{"x":{"type":"string","x-mcp-header":7}}}`,
		"twice":           `{"properties":{"x":{"type":"string","x-mcp-header":"Region"},"y":{"type":"string","x-mcp-header":"region"}}}`,
		"under items":     `{"properties":{"x":{"type":"array","items":{"type":"string","x-mcp-header":"X"}}}}`,
		"under oneOf":     `{"oneOf":[{"properties":{"x":{"type":"string","x-mcp-header":"X"}}}]}`,
		"under $defs":     `{"$defs":{"d":{"type":"string","x-mcp-header":"X"}},"properties":{"x":{"$ref":"#/$defs/d"}}}`,
		"under if":        `{"if":{"properties":{"x":{"type":"string","x-mcp-header":"X"}}}}`,
		"on the root":     `{"type":"string","x-mcp-header":"X"}`,
		"not JSON":        `{"x-mcp-header":`,
		"nested in anyOf": `{"properties":{"o":{"anyOf":[{"properties":{"x":{"type":"string","x-mcp-header":"X"}}}]}}}`,
	} {
		if hs, err := ParamHeaders(json.RawMessage(schema)); err == nil {
			t.Errorf("%s: accepted %s as %v", name, schema, hs)
		}
	}
}

func TestParamHeaderValues(t *testing.T) {
	hs := []ParamHeader{{"S", []string{"s"}}, {"I", []string{"i"}}, {"B", []string{"o", "b"}}, {"F", []string{"f"}}, {"Big", []string{"big"}}, {"None", []string{"none"}}}
	got := paramHeaderValues(hs, []byte(`{"s":"Hello, 世界","i":-7,"o":{"b":false},"f":1.5,"big":9007199254740993}`))
	want := map[string]string{"Mcp-Param-S": "=?base64?SGVsbG8sIOS4lueVjA==?=", "Mcp-Param-I": "-7", "Mcp-Param-B": "false"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("headers (-want +got):\n%s", d)
	}
}

// headerValue follows the transport's encoding table.
func TestHeaderValue(t *testing.T) {
	for in, want := range map[string]string{
		"us-west1":           "us-west1",
		"Hello, 世界":          "=?base64?SGVsbG8sIOS4lueVjA==?=",
		" padded ":           "=?base64?IHBhZGRlZCA=?=",
		"line1\nline2":       "=?base64?bGluZTEKbGluZTI=?=",
		"=?base64?literal?=": "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=",
		"a b":                "a b",
	} {
		if got := headerValue(in); got != want {
			t.Errorf("headerValue(%q) = %q, want %q", in, got, want)
		}
		if strings.ContainsAny(headerValue(in), "\r\n") {
			t.Errorf("headerValue(%q) has a line break", in)
		}
	}
}

func FuzzParamHeaders(f *testing.F) {
	f.Add([]byte(`{"properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`))
	f.Add([]byte(`{"properties":{"x":{"type":"array","items":{"x-mcp-header":"X"}}}}`))
	f.Add([]byte(`{"x-mcp-header":[{"x-mcp-header":{}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		hs, err := ParamHeaders(b)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, h := range hs {
			if h.Name == "" || !isToken(h.Name) || len(h.Path) == 0 || seen[strings.ToLower(h.Name)] {
				t.Fatalf("accepted %+v from %s", h, b)
			}
			seen[strings.ToLower(h.Name)] = true
		}
		for _, v := range paramHeaderValues(hs, b) {
			if strings.ContainsAny(v, "\r\n\x00") {
				t.Fatalf("a header value with a control character: %q", v)
			}
		}
	})
}

// A tool whose x-mcp-header annotations are invalid is left out of a
// remote server's surface (the transport says a client must), and OnReject
// hears why; the valid ones stay.
func TestProbeLeavesOutBadParamHeaders(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "remote", Version: "1.0.0"}, nil)
	handler := func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{}, nil
	}
	srv.AddTool(&sdk.Tool{Name: "good", InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`)}, handler)
	srv.AddTool(&sdk.Tool{Name: "plain", InputSchema: json.RawMessage(`{"type":"object"}`)}, handler)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A bad annotation, as a careless or hostile server would send
		// it, put into the real server's list.
		rec := httptest.NewRecorder()
		sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true}).ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		if r.Header.Get("Mcp-Method") == "tools/list" {
			body = bytes.Replace(body, []byte(`"tools":[`), []byte(`"tools":[{"name":"bad","inputSchema":{"type":"object","properties":{"n":{"type":"number","x-mcp-header":"N"}}}},`), 1)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		w.Write(body)
	}))
	defer ts.Close()
	var rejected []string
	s, err := Probe(context.Background(), ServerSpec{Name: "remote", URL: ts.URL, Era: EraModern, Timeout: 10 * time.Second,
		OnReject: func(tool string, why error) { rejected = append(rejected, tool+": "+why.Error()) }})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range s.Tools {
		name, _ := jsonString(jsonscan.Find(tool, "name"))
		names = append(names, name)
	}
	if d := cmp.Diff([]string{"good", "plain"}, names); d != "" {
		t.Errorf("tools (-want +got):\n%s", d)
	}
	if len(rejected) != 1 || !strings.Contains(rejected[0], "bad: ") || !strings.Contains(rejected[0], "not a string, integer or boolean") {
		t.Errorf("rejected = %q, want the bad tool and why", rejected)
	}
}
