package runtime

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpform/mcpform/mcp"
)

// A 2026-07-28 server that asks for a tool parameter in a header (an
// x-mcp-header on its schema) gets it from `mcpform run`, from the locked
// schema: the real Go SDK server refuses a call without it (the control,
// a direct POST), and answers the same call through the proxy, having
// seen Mcp-Param-Region.
func TestRemoteParamHeadersMirrored(t *testing.T) {
	s := sdk.NewServer(&sdk.Implementation{Name: "spanner", Version: "1.0.0"}, nil)
	schema := json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"query":{"type":"string"}},"required":["region","query"]}`)
	s.AddTool(&sdk.Tool{Name: "execute_sql", InputSchema: schema}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ran"}}}, nil
	})
	handler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{Stateless: true})
	var mu sync.Mutex
	var regions []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "tools/call" {
			mu.Lock()
			regions = append(regions, r.Header.Get("Mcp-Param-Region"))
			mu.Unlock()
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close) // after the run's cleanup, which ends its subscriptions/listen stream
	url := ts.URL + "/mcp"

	// The control: the same call without the header is refused.
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}},"name":"execute_sql","arguments":{"region":"us-west1","query":"SELECT 1"}}}`
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "execute_sql")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "Mcp-Param-Region") {
		t.Fatalf("the control: a call without the header got %d %s, want the server's refusal", resp.StatusCode, b)
	}

	r := startRemoteRunIn(t, url, mcp.EraModern)
	r.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"execute_sql","arguments":{"region":"us-west1","query":"SELECT 1"}}}`)
	if got := r.answer("2"); !strings.Contains(got, `"text":"ran"`) {
		t.Fatalf("the call through mcpform run: %s\nstderr:\n%s", got, r.stderr.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(regions) < 2 || regions[len(regions)-1] != "us-west1" {
		t.Errorf("the server saw Mcp-Param-Region %q on the calls, want us-west1 on the proxy's", regions)
	}
}
