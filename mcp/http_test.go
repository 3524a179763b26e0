package mcp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpform/mcpform/internal/npmtest"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// freePort returns a loopback port nobody listens on (yet).
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitListening waits until something accepts connections on addr.
func waitListening(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("nothing listens on %s after 30 s", addr)
}

// The npm server-everything in its streamableHttp mode shows a probe over
// HTTP the same surface as over stdio, in auto (it answers server/discover
// with an error: legacy) and forced legacy.
func TestProbeHTTPEverything(t *testing.T) {
	bin := npmtest.Bin(t, "mcp-server-everything")
	port := freePort(t)
	cmd := exec.Command(bin, "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprint("PORT=", port))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := fmt.Sprint("127.0.0.1:", port)
	waitListening(t, addr)
	stdio, err := Probe(context.Background(), ServerSpec{Name: "stdio", Command: []string{bin, "stdio"}, Env: []string{"PATH"}, Era: EraLegacy})
	if err != nil {
		t.Fatal(err)
	}
	for _, era := range []Era{EraAuto, EraLegacy} {
		s, err := Probe(context.Background(), ServerSpec{Name: "http", URL: "http://" + addr + "/mcp", Era: era})
		if err != nil {
			t.Fatalf("%v: %v\nserver stderr: %s", era, err, stderr.String())
		}
		if s.Era != EraLegacy || s.ProtocolVersion != LatestLegacyVersion {
			t.Errorf("%v: era %v version %s, want legacy %s", era, s.Era, s.ProtocolVersion, LatestLegacyVersion)
		}
		if diff := cmp.Diff(compactAll(t, stdio.Tools), compactAll(t, s.Tools)); diff != "" || len(s.Tools) < 10 {
			t.Errorf("%v: %d tools over HTTP, not those over stdio (-stdio +http):\n%s", era, len(s.Tools), diff)
		}
		if diff := cmp.Diff(compactAll(t, stdio.Prompts), compactAll(t, s.Prompts)); diff != "" {
			t.Errorf("%v: prompts differ (-stdio +http):\n%s", era, diff)
		}
	}
}

// The Go SDK's StreamableHTTPHandler: stateless, it speaks 2026-07-28
// (auto finds it); stateful, it answers server/discover listing only the
// initialize-era versions, and auto speaks initialize to it.
func TestProbeHTTPGoSDK(t *testing.T) {
	newServer := func() *sdk.Server {
		s := sdk.NewServer(&sdk.Implementation{Name: "remote", Version: "1.0.0"}, nil)
		type in struct {
			Text string `json:"text"`
		}
		sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echo the text"}, func(ctx context.Context, req *sdk.CallToolRequest, args in) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: args.Text}}}, nil, nil
		})
		return s
	}
	for _, c := range []struct {
		name      string
		stateless bool
		era       Era
		want      Era
	}{
		{"stateless/auto", true, EraAuto, EraModern},
		{"stateless/modern", true, EraModern, EraModern},
		{"stateful/auto", false, EraAuto, EraLegacy},
		{"stateful/legacy", false, EraLegacy, EraLegacy},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := newServer()
			ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{Stateless: c.stateless}))
			defer ts.Close()
			s, err := Probe(context.Background(), ServerSpec{Name: "remote", URL: ts.URL, Era: c.era, Timeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if s.Era != c.want || len(s.Tools) != 1 || !strings.Contains(string(s.Tools[0]), `"echo"`) {
				t.Errorf("era %v, tools %s; want era %v and the echo tool", s.Era, s.Tools, c.want)
			}
		})
	}
}

// What a remote server must not get away with; each is refused with a
// clear error.
func TestProbeHTTPRefuses(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("the probe followed a redirect to another origin")
	}))
	defer other.Close()
	stream := func(w http.ResponseWriter, events func(w http.ResponseWriter)) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		events(w)
	}
	for _, c := range []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"redirect to another origin", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
		}, "another origin"},
		{"wrong content type", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html>login</html>")
		}, `Content-Type "text/html"`},
		{"session id with control characters", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Mcp-Session-Id", "abc def")
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
		}, "outside visible ASCII"},
		{"endless stream", func(w http.ResponseWriter, r *http.Request) {
			stream(w, func(w http.ResponseWriter) {
				for i := 0; r.Context().Err() == nil && i < 1<<20; i++ {
					if _, err := fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\""+strings.Repeat("x", 4000)+"\"}}\n\n"); err != nil {
						return
					}
				}
			})
		}, "stream"},
		{"huge event", func(w http.ResponseWriter, r *http.Request) {
			stream(w, func(w http.ResponseWriter) {
				fmt.Fprint(w, "data: "+strings.Repeat("x", 2<<20)+"\n\n")
			})
		}, "longer than"},
		{"401", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="https://x.example/.well-known/oauth-protected-resource"`)
			w.WriteHeader(401)
		}, "bearer_env"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts := httptest.NewServer(c.handler)
			defer ts.Close()
			_, err := Probe(context.Background(), ServerSpec{Name: "remote", URL: ts.URL + "/mcp", Era: EraLegacy, Timeout: 20 * time.Second, MaxLineSize: 1 << 20})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error saying %q", err, c.want)
			}
		})
	}
}

// A configured URL that is not private may not lead mcpform to a
// loopback, private or link-local address; the control dials the same
// address from a client configured for a loopback URL.
func TestHTTPClientRefusesPrivateAddresses(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer ts.Close()
	public, _ := url.Parse("https://mcp.example.com/mcp")
	if _, err := newHTTPClient(public).Get(ts.URL); err == nil || !strings.Contains(err.Error(), "a loopback address: mcpform connects to no address more private") {
		t.Errorf("a client for a public URL reached %s: %v", ts.URL, err)
	}
	// A server on a LAN address is no loopback one: what it hands out
	// (metadata, authorization servers) may not lead to loopback either.
	lan, _ := url.Parse("https://10.0.0.5/mcp")
	if _, err := HTTPClient(lan).Get(ts.URL); err == nil || !strings.Contains(err.Error(), "more private than the configured url's own (private)") {
		t.Errorf("a client for a server at 10.0.0.5 reached the loopback address %s: %v", ts.URL, err)
	}
	loopback, _ := url.Parse(ts.URL)
	resp, err := newHTTPClient(loopback).Get(ts.URL)
	if err != nil {
		t.Fatalf("control: a client for the loopback URL could not reach it: %v", err)
	}
	resp.Body.Close()
	for host, want := range map[string]bool{"localhost": true, "127.0.0.1": true, "10.1.2.3": true, "169.254.169.254": true, "::1": true, "fd00::1": true, "100.100.100.200": true, "0.1.2.3": true, "fec0::1": true, "64:ff9b::7f00:1": true, "2002:7f00:1::1": true, "::ffff:10.0.0.1": true,
		"8.8.8.8": false, "2606:4700::1111": false, "mcp.example.com": false} {
		if got := hostIsPrivate(host); got != want {
			t.Errorf("hostIsPrivate(%q) = %v, want %v", host, got, want)
		}
	}
}

// The SSE reader over any bytes: it never panics, delivers only events
// within the line limit, always answers the request, with the server's
// answer or an error, and keeps for a resumption only an id that can go
// back in a header and a wait within maxRetry.
func FuzzReadStream(f *testing.F) {
	f.Add([]byte("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"))
	f.Add([]byte(": keep-alive\n\nevent: message\nid: 7\ndata: {\"jsonrpc\":\"2.0\",\n data: \"id\":1,\"result\":{}}\n\n"))
	f.Add([]byte("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n"))
	f.Add([]byte("data: " + strings.Repeat("x", 300) + "\n\n"))
	f.Add([]byte("retry: 10\r\ndata: x\r\n\r\n"))
	f.Add([]byte("id: e1\nretry: 500\ndata: \n\n"))
	f.Add([]byte("id: a\x01b\nretry: 1e3\n\nid:\n\nid: ok\nretry: 99999999999\ndata: {}\n\n"))
	f.Add([]byte("id: " + strings.Repeat("i", 300) + "\n\nretry:\nid: x\n"))
	f.Fuzz(func(t *testing.T, stream []byte) {
		h := &httpLines{maxLine: 256, ctx: context.Background()}
		var got [][]byte
		answered := false
		deliver := func(msg []byte) {
			if len(msg) > 256 {
				t.Fatalf("an event of %d bytes passed the 256-byte limit", len(msg))
			}
			got = append(got, msg)
			answered = answered || answers(msg, []byte("1"))
		}
		var cur streamCursor
		if why, _ := h.scanStream(&io.LimitedReader{R: bytes.NewReader(stream), N: maxStreamBytes}, []byte("1"), deliver, &cur); why != "" {
			answered = true
		}
		if !answered {
			t.Fatalf("the request was left unanswered by %q (got %q)", stream, got)
		}
		// What a resumption would send back: a header-safe id, a bounded wait.
		if len(cur.lastID) > maxEventID || (cur.lastID != "" && !visibleASCII(cur.lastID)) {
			t.Fatalf("the cursor took the id %q", cur.lastID)
		}
		if w := cur.wait(); w < 0 || w > maxRetry {
			t.Fatalf("the cursor waits %v", w)
		}
	})
}
