package runtime

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpform/mcpform/mcp"
)

// A client's cancellation of a call to a 2026-07-28 remote server is the
// transport's: mcpform closes the call's stream, which the real Go SDK
// server takes as cancellation (with PropagateRequestCancellation, the
// tool's context ends), and posts no
// notifications/cancelled, which that transport does not have.
func TestRemoteModernCancelClosesStream(t *testing.T) {
	started, stopped := make(chan struct{}), make(chan struct{})
	s := sdk.NewServer(&sdk.Implementation{Name: "slow", Version: "1.0.0"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "wait"}, func(ctx context.Context, req *sdk.CallToolRequest, args in) (*sdk.CallToolResult, any, error) {
		close(started)
		select {
		case <-ctx.Done():
			close(stopped)
			return nil, nil, ctx.Err()
		case <-time.After(10 * time.Second):
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "finished"}}}, nil, nil
		}
	})
	handler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, &sdk.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true})
	var cancelPosts atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "notifications/cancelled" {
			cancelPosts.Add(1)
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	r := startRemoteRunIn(t, ts.URL+"/mcp", mcp.EraModern)
	r.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wait","arguments":{"text":"x"}}}`)
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatalf("the tool did not start:\n%s\n%s", r.out.String(), r.stderr.String())
	}
	r.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"the user left"}}`)
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatalf("the server's tool was not cancelled when mcpform closed the stream:\n%s", r.stderr.String())
	}
	// The proxy still serves: a ping after the cancellation is answered.
	r.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	r.answer("3")
	if n := cancelPosts.Load(); n != 0 {
		t.Errorf("mcpform posted notifications/cancelled %d times to a 2026-07-28 server", n)
	}
	if strings.Contains(r.out.String(), `"text":"finished"`) {
		t.Errorf("the cancelled call was answered with its result:\n%s", r.out.String())
	}
}
