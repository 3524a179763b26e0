package runtime

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/mcp"
	"github.com/mcpform/mcpform/runtime/audit"
	"github.com/mcpform/mcpform/surface"
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

// A remote server that cannot be reached when run starts did not start:
// the client is told mcpform could not reach it, and why, not that it
// drifted (a quarantine would send the user to plan and apply a
// surface that never changed).
func TestRemoteUnreachableIsNoDrift(t *testing.T) {
	srv := newStatefulRemote(t)
	s, err := mcp.Probe(context.Background(), mcp.ServerSpec{Name: "remote", URL: srv.url, Era: mcp.EraLegacy, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	e, err := surface.Entry(s)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + l.Addr().String() + "/mcp"
	l.Close() // nothing listens there now
	e.Remote = &lock.Remote{URL: down, Transport: lock.TransportStreamableHTTP}
	log, err := audit.Open(filepath.Join(t.TempDir(), "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	inR, inW := io.Pipe()
	r := &remoteRun{t: t, in: inW, out: &syncBuffer{}, stderr: &syncBuffer{}}
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), Options{Name: "remote", Entry: e, Stdin: inR, Stdout: r.out, Stderr: r.stderr, Audit: log, Session: "s", StartTimeout: 5 * time.Second, DrainTimeout: time.Second})
	}()
	r.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	got := r.answer("1")
	inW.Close()
	<-done
	if strings.Contains(got, "quarantined") || strings.Contains(got, "mcpform apply") {
		t.Errorf("an unreachable server was taken for drift: %s", got)
	}
	if !strings.Contains(got, "could not reach it") || !strings.Contains(got, "connection refused") {
		t.Errorf("the client is not told the server could not be reached, and why: %s", got)
	}
}
