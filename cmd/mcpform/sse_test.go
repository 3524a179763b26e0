package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpform/mcpform/internal/npmtest"
	"github.com/mcpform/mcpform/lock"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// writeRemoteHCL declares the server "remote" at url in dir.
func writeRemoteHCL(t *testing.T, dir, url string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "mcp.hcl"), []byte("server \"remote\" {\n  url = \""+url+"\"\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The npm server-everything over the deprecated HTTP+SSE transport: apply
// locks it as "sse" (found by the fallback), a second plan has no changes,
// verify passes, and run reaches it through the proxy.
func TestRemoteSSELifecycle(t *testing.T) {
	everything := npmtest.Bin(t, "mcp-server-everything")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	server := exec.Command(everything, "sse")
	server.Env = append(os.Environ(), fmt.Sprint("PORT=", port))
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Process.Kill(); server.Wait() })
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", fmt.Sprint("127.0.0.1:", port)); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("server-everything did not listen within 30 s")
		}
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/sse", port)
	dir := t.TempDir()
	writeRemoteHCL(t, dir, url)
	mcpformIn(t, dir, 0, "apply", "-auto-approve")
	data, err := os.ReadFile(filepath.Join(dir, "mcp.lock"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := lock.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if e := f.Servers["remote"]; e.Remote == nil || e.Remote.Transport != lock.TransportSSE || e.Remote.URL != url {
		t.Fatalf("the lock does not pin the server as reached over HTTP+SSE:\n%s", data)
	}
	mcpformIn(t, dir, 0, "plan", "-detailed-exitcode")
	mcpformIn(t, dir, verifyInSync, "verify")
	out := runSession(t, dir, "2025-11-25", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"over sse"}`)
	if !strings.Contains(out, `"id":2,"result":{"content":[{"type":"text","text":"Echo: over sse"}]`) {
		t.Errorf("the call through mcpform run did not reach the HTTP+SSE server:\n%s", out)
	}
}

// A Go SDK server behind its SSEHandler is locked over HTTP+SSE; when its
// stream later names an endpoint of another origin, plan fails, nothing is
// posted there, and the lock is byte-identical. When it moves to
// Streamable HTTP at the same url, the plan reports
// REMOTE-TRANSPORT-CHANGED, and run (which speaks only the locked
// transport) does not reach it.
func TestRemoteSSEEndpointAndTransport(t *testing.T) {
	s := sdk.NewServer(&sdk.Implementation{Name: "legacy", Version: "1.0.0"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echo the text"}, func(ctx context.Context, req *sdk.CallToolRequest, args in) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: args.Text}}}, nil, nil
	})
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	var mode atomic.Int32 // 0 HTTP+SSE, 1 a foreign endpoint, 2 Streamable HTTP
	sse := sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return s }, nil)
	streamable := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch mode.Load() {
		case 1:
			if r.Method == http.MethodGet {
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "event: endpoint\ndata: %s/sse?sessionid=1\n\n", other.URL)
				w.(http.Flusher).Flush()
				<-r.Context().Done()
				return
			}
			sse.ServeHTTP(w, r)
		case 2:
			streamable.ServeHTTP(w, r)
		default:
			sse.ServeHTTP(w, r)
		}
	}))
	defer ts.Close()
	dir := t.TempDir()
	writeRemoteHCL(t, dir, ts.URL+"/sse")
	mcpformIn(t, dir, 0, "apply", "-auto-approve")
	lockPath := filepath.Join(dir, "mcp.lock")
	data, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(`"transport": "sse"`)) {
		t.Fatalf("not locked over HTTP+SSE:\n%s", data)
	}
	mcpformIn(t, dir, 0, "plan", "-detailed-exitcode")

	mode.Store(1)
	mcpformIn(t, dir, exitError, "plan")
	if after, _ := os.ReadFile(lockPath); !bytes.Equal(after, data) {
		t.Errorf("a failed plan changed the lock")
	}
	if elsewhere.Load() != 0 {
		t.Errorf("%d requests went to the other origin", elsewhere.Load())
	}

	mode.Store(2)
	if out := mcpformIn(t, dir, 0, "plan"); !strings.Contains(string(out), "REMOTE-TRANSPORT-CHANGED") {
		t.Errorf("a server that moved to Streamable HTTP is not REMOTE-TRANSPORT-CHANGED in the plan:\n%s", out)
	}
	if out := runSession(t, dir, "2025-11-25", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}`); strings.Contains(out, `"text":"x"`) {
		t.Errorf("run spoke another transport than the locked one:\n%s", out)
	}
}
