package mcp

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// A hostile remote server against httpLines, the probe and StartRemote.

// initOK answers initialize (legacy) with a session.
func initOK(w http.ResponseWriter, session string) {
	if session != "" {
		w.Header().Set("Mcp-Session-Id", session)
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"`+LatestLegacyVersion+`","capabilities":{},"serverInfo":{"name":"x","version":"1"}}}`)
}

func method(r *http.Request) string { return r.Header.Get("Mcp-Method") }

// probeWithin runs a probe that must end within limit.
func probeWithin(t *testing.T, spec ServerSpec, limit time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { _, err := Probe(context.Background(), spec); done <- err }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		t.Fatalf("the probe (timeout %v) still runs after %v", spec.Timeout, limit)
		return nil
	}
}

// A server that accepts notifications/initialized with 202 and then never
// ends the body (or never sends headers) held the probe past its timeout:
// the notification was posted inline, bounded only by the 30 s header
// timeout (headers) or nothing at all (body).
func TestAttackProbeStalledNotification(t *testing.T) {
	for _, stallHeaders := range []bool{false, true} {
		t.Run(fmt.Sprint("headers=", stallHeaders), func(t *testing.T) {
			release := make(chan struct{})
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch method(r) {
				case "initialize":
					initOK(w, "s1")
				case "notifications/initialized":
					if !stallHeaders {
						w.WriteHeader(http.StatusAccepted)
						w.(http.Flusher).Flush()
					}
					select {
					case <-release:
					case <-r.Context().Done():
					}
				default:
					w.WriteHeader(http.StatusMethodNotAllowed)
				}
			}))
			defer ts.Close()
			defer close(release)
			probeWithin(t, ServerSpec{Name: "remote", URL: ts.URL, Era: EraLegacy, Timeout: 2 * time.Second}, 10*time.Second)
		})
	}
}

// A server whose stream first breaks the probe's reader (a line that is
// not JSON: the reader stops) and then sends more: the next line was
// written to a pipe nobody reads any more, and Close waited for it forever.
func TestAttackProbeCloseAfterReaderFailed(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: not json\n\n")
		for i := 0; i < 3; i++ {
			fmt.Fprint(w, `data: {"jsonrpc":"2.0","method":"notifications/message","params":{}}`+"\n\n")
		}
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer ts.Close()
	err := probeWithin(t, ServerSpec{Name: "remote", URL: ts.URL, Era: EraLegacy, Timeout: 3 * time.Second}, 10*time.Second)
	if err == nil || !strings.Contains(err.Error(), "non-JSON") {
		t.Errorf("got %v, want the server's non-JSON refused", err)
	}
}

// An SSE stream that only keeps alive: the probe ends at its timeout, and
// Close leaves no request running on the server.
func TestAttackProbeEndlessKeepAlive(t *testing.T) {
	var mu sync.Mutex
	open := 0
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		mu.Lock()
		open++
		mu.Unlock()
		defer func() { mu.Lock(); open--; mu.Unlock() }()
		w.Header().Set("Content-Type", "text/event-stream")
		for r.Context().Err() == nil {
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			time.Sleep(20 * time.Millisecond)
		}
	}))
	defer ts.Close()
	err := probeWithin(t, ServerSpec{Name: "remote", URL: ts.URL, Era: EraLegacy, Timeout: 2 * time.Second}, 10*time.Second)
	if err == nil {
		t.Fatal("a server that never answers passed the probe")
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		mu.Lock()
		n := open
		mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d requests still open on the server after the probe", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// lines runs httpLines against handler, writes msgs and returns the lines
// read until want of them came (or 3 s passed).
func lines(t *testing.T, spec ServerSpec, handler http.HandlerFunc, want int, msgs ...string) []string {
	t.Helper()
	ts := httptest.NewServer(handler)
	defer ts.Close()
	spec.URL = ts.URL
	h, err := dialHTTP(spec)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(h)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			got <- sc.Text()
		}
		close(got)
	}()
	for _, m := range msgs {
		h.Write([]byte(m + "\n"))
	}
	var out []string
	timeout := time.After(3 * time.Second)
loop:
	for len(out) < want {
		select {
		case l, ok := <-got:
			if !ok {
				break loop
			}
			out = append(out, l)
		case <-timeout:
			break loop
		}
	}
	go io.Copy(io.Discard, h) // Close may deliver more
	h.Close()
	return out
}

// An event whose data lines each hold a message becomes one line, never
// two: the server cannot put a line of its choosing next to the answer;
// nor can a CR inside or a CR-only line ending.
func TestAttackSSESmuggling(t *testing.T) {
	for name, stream := range map[string]string{
		"two data lines": "data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\ndata: {\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}\n\n",
		"cr inside":      "data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\rdata: {\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}\n\n",
		"cr only":        "data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\r\rdata: {\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}\r\r",
		"escaped nl":     "data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"x\":\"a\\n{\\\"id\\\":5}\"}}\n\n",
	} {
		t.Run(name, func(t *testing.T) {
			out := lines(t, ServerSpec{}, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprint(w, stream)
			}, 2, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
			if len(out) != 1 {
				t.Fatalf("one request became %d lines: %q", len(out), out)
			}
			if strings.ContainsAny(out[0], "\r\n") {
				t.Errorf("a line holds a line break: %q", out[0])
			}
		})
	}
}

// A session id or a protocol version from anything but initialize's
// answer is not taken up.
func TestAttackSessionFromOtherAnswers(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	out := lines(t, ServerSpec{}, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Mcp-Session-Id")+"|"+r.Header.Get("MCP-Protocol-Version"))
		mu.Unlock()
		w.Header().Set("Mcp-Session-Id", "evil")
		w.Header().Set("Content-Type", "application/json")
		b, _ := io.ReadAll(r.Body)
		if strings.Contains(string(b), `"id":2`) {
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"evil"}}`)
		} else {
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":3,"result":{}}`)
		}
	}, 1, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if len(out) != 1 {
		t.Fatalf("lines %q", out)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, s := range seen {
		if strings.Contains(s, "evil") {
			t.Errorf("a later request carried %q", s)
		}
	}
}

// The session id is refused when it could split a header.
func TestAttackSessionHeaderInjection(t *testing.T) {
	for _, s := range []string{"a\r\nX-Evil: 1", "a\x00b", "a b", "é"} {
		if visibleASCII(s) {
			t.Errorf("visibleASCII(%q)", s)
		}
	}
}

// The token never reaches another origin, nor http from https; and an
// error body that echoes it does not put it into mcpform's error.
func TestAttackBearer(t *testing.T) {
	const token = "sekrit-token-0123456789"
	lookup := func(string) (string, bool) { return token, true }
	leaked := make(chan string, 10)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked <- r.Header.Get("Authorization")
	}))
	defer other.Close()
	var tlsURL string
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/mcp" {
			u, _ := url.Parse(tlsURL)
			http.Redirect(w, r, "http://"+u.Host+"/plain", http.StatusTemporaryRedirect)
			return
		}
		leaked <- "https->http: " + r.Header.Get("Authorization")
	}))
	defer tlsSrv.Close()
	tlsURL = tlsSrv.URL
	t.Run("https to http", func(t *testing.T) {
		u, _ := url.Parse(tlsSrv.URL + "/mcp")
		c := newHTTPClient(u)
		c.Transport.(*http.Transport).TLSClientConfig = tlsSrv.Client().Transport.(*http.Transport).TLSClientConfig
		req, _ := http.NewRequest("POST", u.String(), strings.NewReader("{}"))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
			t.Error("followed a redirect from https to http")
		} else if strings.Contains(err.Error(), token) {
			t.Errorf("the error holds the token: %v", err)
		}
	})
	chain := 0
	var chainURL string
	chainSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chain++
		if chain < 3 {
			http.Redirect(w, r, chainURL+fmt.Sprint("/hop", chain), http.StatusTemporaryRedirect)
			return
		}
		http.Redirect(w, r, other.URL+"/steal", http.StatusTemporaryRedirect)
	}))
	defer chainSrv.Close()
	chainURL = chainSrv.URL
	t.Run("redirect chain to another origin", func(t *testing.T) {
		err := probeWithin(t, ServerSpec{Name: "remote", URL: chainSrv.URL + "/mcp", Era: EraLegacy, BearerEnv: "T", LookupEnv: lookup, Timeout: 3 * time.Second}, 10*time.Second)
		if err == nil || !strings.Contains(err.Error(), "another origin") || strings.Contains(err.Error(), token) {
			t.Errorf("got %v", err)
		}
	})
	t.Run("echoed in an error body", func(t *testing.T) {
		echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, "bad request with %s", r.Header.Get("Authorization"))
		}))
		defer echo.Close()
		err := probeWithin(t, ServerSpec{Name: "remote", URL: echo.URL, Era: EraLegacy, BearerEnv: "T", LookupEnv: lookup, Timeout: 3 * time.Second}, 10*time.Second)
		if err == nil || strings.Contains(err.Error(), token) {
			t.Errorf("the probe's error shows the token: %v", err)
		}
	})
	select {
	case l := <-leaked:
		t.Errorf("the token reached another origin: %q", l)
	default:
	}
}

// Addresses in any spelling that lead to loopback are refused to a client
// configured for a public URL.
func TestAttackPrivateAddressForms(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("reached loopback as %s", r.Host)
	}))
	defer ts.Close()
	port := ts.URL[strings.LastIndex(ts.URL, ":")+1:]
	public, _ := url.Parse("https://mcp.example.com/mcp")
	c := newHTTPClient(public)
	for _, host := range []string{"127.0.0.1", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "0.0.0.0", "[::]", "[::1]", "2130706433", "0x7f000001", "0177.0.0.1", "127.1", "localhost"} {
		resp, err := c.Get("http://" + host + ":" + port + "/")
		if err == nil {
			resp.Body.Close()
			t.Errorf("%s: reached", host)
		}
	}
	for host, want := range map[string]bool{"::ffff:127.0.0.1": true, "0.0.0.0": true, "::": true, "::ffff:10.0.0.1": true, "fe80::1": true} {
		if got := hostIsPrivate(host); got != want {
			t.Errorf("hostIsPrivate(%q) = %v, want %v", host, got, want)
		}
	}
}

// Headers past the client's limit are refused rather than held.
func TestAttackHugeHeaders(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Big", strings.Repeat("a", 4<<20))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	defer ts.Close()
	u, _ := url.Parse(ts.URL)
	resp, err := newHTTPClient(u).Get(ts.URL)
	if err == nil {
		resp.Body.Close()
		t.Error("a 4 MiB header was read")
	}
}

// A remote server under mcpform run whose stream floods notifications
// while the proxy reads nothing more: Close still ends (at most its
// grace and a little).
func TestAttackRemoteCloseWhileFlooding(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for r.Context().Err() == nil {
			if _, err := fmt.Fprint(w, `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"data":"`+strings.Repeat("x", 1000)+`"}}`+"\n\n"); err != nil {
				return
			}
		}
	}))
	defer ts.Close()
	p, err := StartRemote(context.Background(), ServerSpec{Name: "remote", URL: ts.URL, ShutdownGrace: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(p.Stdin, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	time.Sleep(300 * time.Millisecond) // the pipe fills; nobody reads it
	done := make(chan struct{})
	go func() { p.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close of a remote server still runs after 10 s")
	}
}
