package mcp

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// expiringServer is the real Go SDK server behind its stateful
// StreamableHTTPHandler; expire swaps in a fresh handler, which knows none
// of the old sessions, so the SDK itself answers their requests 404.
// sessions holds the Mcp-Session-Id of each tools/call it got, inits the
// number of initializes.
type expiringServer struct {
	url     string
	current atomic.Pointer[http.Handler]
	mu      sync.Mutex
	calls   []string
	inits   int
	refuse  atomic.Bool // answer every request of a session 404, as a broken server would
	expire  func()
}

func newExpiringServer(t *testing.T) *expiringServer {
	t.Helper()
	s := &expiringServer{}
	srv := sdk.NewServer(&sdk.Implementation{Name: "remote", Version: "1.0.0"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	sdk.AddTool(srv, &sdk.Tool{Name: "echo", Description: "Echo the text"}, func(ctx context.Context, req *sdk.CallToolRequest, args in) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: args.Text}}}, nil, nil
	})
	s.expire = func() {
		var h http.Handler = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
		s.current.Store(&h)
	}
	s.expire()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		session, method := r.Header.Get("Mcp-Session-Id"), r.Header.Get("Mcp-Method")
		s.mu.Lock()
		switch method {
		case "tools/call":
			s.calls = append(s.calls, session)
		case "initialize":
			s.inits++
		}
		s.mu.Unlock()
		if s.refuse.Load() && session != "" && r.Method == http.MethodPost && method != "notifications/initialized" {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		(*s.current.Load()).ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	s.url = ts.URL
	return s
}

// lineConn is an httpLines driven as the proxy drives it: lines written,
// lines read.
type lineConn struct {
	t     *testing.T
	h     *httpLines
	lines chan string
}

func dialLines(t *testing.T, url string) *lineConn {
	t.Helper()
	h, err := dialHTTP(ServerSpec{Name: "remote", URL: url, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c := &lineConn{t: t, h: h, lines: make(chan string, 100)}
	go func() {
		sc := bufio.NewScanner(h)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	t.Cleanup(func() { h.Close() })
	return c
}

func (c *lineConn) session() string {
	c.h.mu.Lock()
	defer c.h.mu.Unlock()
	return c.h.session
}

func (c *lineConn) send(line string) {
	c.t.Helper()
	if _, err := c.h.Write([]byte(line + "\n")); err != nil {
		c.t.Fatal(err)
	}
}

// until reads lines until one answers id, and returns all it read.
func (c *lineConn) until(id string) []string {
	c.t.Helper()
	var got []string
	deadline := time.After(5 * time.Second)
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				c.t.Fatalf("the stream ended before the answer to %s; read:\n%s", id, strings.Join(got, "\n"))
			}
			got = append(got, l)
			if strings.Contains(l, `"id":`+id+`,`) && !strings.Contains(l, `"method"`) {
				return got
			}
		case <-deadline:
			c.t.Fatalf("no answer to %s within 5 s; read:\n%s", id, strings.Join(got, "\n"))
		}
	}
}

func (c *lineConn) handshake() {
	c.t.Helper()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if got := c.until("1"); !strings.Contains(got[len(got)-1], `"protocolVersion":"2025-11-25"`) {
		c.t.Fatalf("initialize: %s", got)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

func call(id, text string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + text + `"}}}`
}

// A session the real Go SDK server no longer knows (it answers 404) is
// started again with the proxy's own initialize: the call that found it
// ended succeeds in the new session, the new initialize's answer is no
// line, and the proxy is told every list changed, so it re-verifies the
// new session's surface.
func TestHTTPSessionReestablished(t *testing.T) {
	s := newExpiringServer(t)
	c := dialLines(t, s.url)
	c.handshake()
	c.send(call("2", "before"))
	if got := c.until("2"); !strings.Contains(got[len(got)-1], `"text":"before"`) {
		t.Fatalf("the first call: %s", got)
	}
	first := c.session()

	s.expire()
	c.send(call("3", "after"))
	got := c.until("3")
	if !strings.Contains(got[len(got)-1], `"text":"after"`) {
		t.Fatalf("the call after the session ended did not succeed:\n%s", strings.Join(got, "\n"))
	}
	for _, kind := range []string{"tools", "prompts", "resources"} {
		if !strings.Contains(strings.Join(got, "\n"), `{"jsonrpc":"2.0","method":"notifications/`+kind+`/list_changed"}`) {
			t.Errorf("no %s list_changed after the new session:\n%s", kind, strings.Join(got, "\n"))
		}
	}
	for _, l := range got {
		if strings.Contains(l, `"id":1,`) {
			t.Errorf("the new initialize's answer reached the proxy: %s", l)
		}
	}
	s.mu.Lock()
	calls, inits := s.calls, s.inits
	s.mu.Unlock()
	if c.session() == "" || c.session() == first || len(calls) != 3 || calls[1] != first || calls[2] != c.session() || inits != 2 {
		t.Errorf("sessions %q then %q; the server got calls in %q after %d initializes, want the old session's 404 retried once in the new one after 2", first, c.session(), calls, inits)
	}
	hs := string(c.h.renewHandshake())
	if !strings.Contains(hs, `"serverInfo":{"name":"remote"`) {
		t.Errorf("the new session's handshake is not kept for the proxy: %s", hs)
	}

	// And again: each ended session is started again.
	s.expire()
	c.send(call("4", "again"))
	if got := c.until("4"); !strings.Contains(got[len(got)-1], `"text":"again"`) {
		t.Fatalf("the call after the second ended session: %s", got)
	}
}

// A server that ends every session at once gets one new session per
// request, and only maxRenewals in a row: then requests fail with an error
// that says so, and no initialize is sent any more.
func TestHTTPSessionEndsForEver(t *testing.T) {
	s := newExpiringServer(t)
	c := dialLines(t, s.url)
	c.handshake()
	s.refuse.Store(true)
	for i, id := range []string{"2", "3", "4"} {
		got := c.until2(id)
		if !strings.Contains(got, `"code":-32099`) || !strings.Contains(got, "ended the new session") {
			t.Errorf("request %d: %s", i, got)
		}
	}
	for _, id := range []string{"5", "6"} {
		if got := c.until2(id); !strings.Contains(got, `"code":-32099`) || !strings.Contains(got, "the server keeps ending the session") {
			t.Errorf("request %s after %d new sessions: %s", id, maxRenewals, got)
		}
	}
	s.mu.Lock()
	inits := s.inits
	s.mu.Unlock()
	if inits != 1+maxRenewals {
		t.Errorf("%d initializes, want 1 and %d new sessions", inits, maxRenewals)
	}
}

// until2 sends a call with id and returns the line that answers it.
func (c *lineConn) until2(id string) string {
	c.t.Helper()
	c.send(call(id, "x"))
	got := c.until(id)
	return got[len(got)-1]
}

// A 404 without a session (the 2026-07-28 era has none) is an answer like
// any other: no initialize, no second try.
func TestHTTP404WithoutSession(t *testing.T) {
	var posts atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		http.Error(w, "not here", http.StatusNotFound)
	}))
	defer ts.Close()
	c := dialLines(t, ts.URL)
	if got := c.until2("7"); !strings.Contains(got, `"code":-32098`) || !strings.Contains(got, "HTTP 404") {
		t.Errorf("the answer: %s", got)
	}
	if n := posts.Load(); n != 1 {
		t.Errorf("%d POSTs, want 1", n)
	}
}
