package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpform/mcpform/mcp"
)

// A tool plan's probe left out for invalid x-mcp-header annotations is
// left out of run's check of the live surface too: not "added" (drift
// that would quarantine a server plan and apply accepted at every run),
// and never served.
func TestRemoteBadParamHeaderToolIsNoDrift(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "remote", Version: "1.0.0"}, nil)
	srv.AddTool(&sdk.Tool{Name: "good", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ran"}}}, nil
	})
	handler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, r)
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
	t.Cleanup(ts.Close)
	r := startRemoteRunIn(t, ts.URL+"/mcp", mcp.EraModern)
	r.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"good","arguments":{}}}`)
	if got := r.answer("2"); !strings.Contains(got, `"text":"ran"`) {
		t.Errorf("a server whose bad tool plan left out is refused by run: %s\nstderr:\n%s", got, r.stderr.String())
	}
}
