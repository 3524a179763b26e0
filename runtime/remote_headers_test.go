package runtime

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/mcp"
	"github.com/mcpform/mcpform/runtime/audit"
	"github.com/mcpform/mcpform/surface"
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

	r := startModernRemoteRun(t, url)
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

// startModernRemoteRun is startRemoteRun for a server locked over
// 2026-07-28.
func startModernRemoteRun(t *testing.T, url string) *remoteRun {
	t.Helper()
	s, err := mcp.Probe(context.Background(), mcp.ServerSpec{Name: "remote", URL: url, Era: mcp.EraModern, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	e, err := surface.Entry(s)
	if err != nil {
		t.Fatal(err)
	}
	e.Remote = &lock.Remote{URL: url, Transport: lock.TransportStreamableHTTP}
	log, err := audit.Open(filepath.Join(t.TempDir(), "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	r := &remoteRun{t: t, in: inW, out: &syncBuffer{}, stderr: &syncBuffer{}}
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), Options{Name: "remote", Entry: e, Stdin: inR, Stdout: r.out, Stderr: r.stderr, Audit: log, Session: "s", StartTimeout: 5 * time.Second, DrainTimeout: time.Second})
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("the run did not end within 5 s of the client's end")
		}
		log.Close()
	})
	r.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	r.answer("1")
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return r
}
