package mcp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"
)

// A hostile HTTP+SSE server against the fallback (sse.go): what a real
// server cannot be made to send.

// hostileSSE serves /sse as a 2024-11-05 server does (a POST there is a
// 404; a GET opens the stream), with the endpoint event it is given, and
// answers each message POSTed to /message with answer's events.
type hostileSSE struct {
	endpoint string              // the endpoint event's data; "" names none (keep-alives only)
	before   string              // events sent before the endpoint event
	answer   func([]byte) string // the stream's events for a POSTed message; nil answers initialize
	msgs     chan []byte
	gets     atomic.Int32
	posts    atomic.Int32
}

func (h *hostileSSE) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/sse" && r.Method == http.MethodGet:
		h.gets.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, h.before)
		if h.endpoint != "" {
			fmt.Fprintf(w, "event: endpoint\ndata: %s\n\n", h.endpoint)
		}
		w.(http.Flusher).Flush()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-r.Context().Done():
				return
			case <-tick.C:
				fmt.Fprint(w, ": keep-alive\n\n")
			case m := <-h.msgs:
				if h.answer != nil {
					fmt.Fprint(w, h.answer(m))
				} else if bytes.Contains(m, []byte(`"initialize"`)) {
					fmt.Fprint(w, "event: message\ndata: "+`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2024-11-05","capabilities":{},"serverInfo":{"name":"x","version":"1"}}}`+"\n\n")
				}
			}
			w.(http.Flusher).Flush()
		}
	case r.URL.Path == "/message" && r.Method == http.MethodPost:
		h.posts.Add(1)
		b, _ := io.ReadAll(r.Body)
		h.msgs <- b
		w.WriteHeader(http.StatusAccepted)
	default:
		http.NotFound(w, r)
	}
}

func newHostileSSE(t *testing.T, h *hostileSSE) string {
	t.Helper()
	h.msgs = make(chan []byte, 16)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL
}

func TestAttackSSEEndpoint(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	for _, c := range []struct {
		name, endpoint, want string
	}{
		{"other origin", other.URL + "/message", "another origin than its url's"},
		{"other scheme", "https" + strings.TrimPrefix(other.URL, "http") + "/message", "another origin"},
		{"protocol-relative", "//" + strings.TrimPrefix(other.URL, "http://") + "/message", "another origin"},
		{"control character", "/message?s=\x1b[2J", "outside visible ASCII"},
		{"NUL", "/message\x00", "outside visible ASCII"},
		{"userinfo", "SAME/message", "userinfo"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := &hostileSSE{endpoint: c.endpoint}
			base := newHostileSSE(t, h)
			h.endpoint = strings.Replace(h.endpoint, "SAME", "http://user:pw@"+strings.TrimPrefix(base, "http://"), 1)
			err := probeWithin(t, ServerSpec{Name: "sse", URL: base + "/sse", Era: EraLegacy, Timeout: 5 * time.Second}, 10*time.Second)
			var te *TransportError
			if err == nil || !strings.Contains(err.Error(), c.want) || !errors.As(err, &te) {
				t.Fatalf("probe: %v; want a transport error saying %q", err, c.want)
			}
			if strings.ContainsAny(err.Error(), "\x1b\x00") {
				t.Errorf("the error carries the server's control characters unescaped: %q", err)
			}
			if c.name == "other origin" && !strings.Contains(err.Error(), base) {
				t.Errorf("the error does not name both origins: %v", err)
			}
			if elsewhere.Load() != 0 || h.posts.Load() != 0 {
				t.Errorf("a message was posted after the endpoint was refused (%d elsewhere, %d to the server)", elsewhere.Load(), h.posts.Load())
			}
		})
	}
}

// A stream that never names its endpoint, or sends a message first, or
// an event past the line limit, ends the probe in its time.
func TestAttackSSEStream(t *testing.T) {
	huge := "event: message\ndata: " + `{"jsonrpc":"2.0","id":1,"result":{"x":"` + strings.Repeat("a", 8<<10) + `"}}` + "\n\n"
	for _, c := range []struct {
		name string
		h    *hostileSSE
		want string
	}{
		{"no endpoint", &hostileSSE{}, "within 1s"}, // the endpoint wait and the request share the bound,
		{"message first", &hostileSSE{endpoint: "/message", before: "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"}, "a message before its endpoint event"},
		{"huge event", &hostileSSE{endpoint: "/message", answer: func([]byte) string { return huge }}, "longer than 4096 bytes"},
		{"huge line before the endpoint", &hostileSSE{endpoint: "/message", before: ": " + strings.Repeat("k", 8<<10) + "\n"}, "line of the server's stream is longer than 4096 bytes"},
		{"stream ends", &hostileSSE{endpoint: "/message", answer: func([]byte) string { panic(http.ErrAbortHandler) }}, "reading the server's stream"},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := newHostileSSE(t, c.h)
			start := time.Now()
			err := probeWithin(t, ServerSpec{Name: "sse", URL: base + "/sse", Era: EraLegacy, Timeout: 2 * time.Second, RequestTimeout: time.Second, MaxLineSize: 4096}, 5*time.Second)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("probe: %v; want %q", err, c.want)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("the probe took %v", d)
			}
		})
	}
}

// Credentials refused (401, 403) are not a reason to fall back: no GET of
// a stream follows.
func TestAttackSSENoFallbackOnAuth(t *testing.T) {
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden} {
		var gets atomic.Int32
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				gets.Add(1)
			}
			w.WriteHeader(status)
		}))
		err := probeWithin(t, ServerSpec{Name: "sse", URL: ts.URL, Era: EraLegacy, Timeout: 2 * time.Second}, 5*time.Second)
		ts.Close()
		if err == nil || !strings.Contains(err.Error(), fmt.Sprint("HTTP ", status)) || gets.Load() != 0 {
			t.Errorf("HTTP %d: probe %v after %d GETs; want the refusal and no GET", status, err, gets.Load())
		}
	}
}

// FuzzSSEEvents: no stream panics sseEvents or makes it deliver an event
// past the limit, and a stream read a byte at a time gives the same events
// and outcome.
func FuzzSSEEvents(f *testing.F) {
	f.Add([]byte("event: endpoint\ndata: /message?sessionId=1\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"))
	f.Add([]byte(": keep-alive\r\n\r\nevent:endpoint\r\ndata:/m\r\n\r\n"))
	f.Add([]byte("data: a\ndata: b\nid: 3\nretry: 5\n\ndata\n\nevent: x\n\n"))
	f.Add([]byte("data: " + strings.Repeat("x", 300) + "\n\n"))
	f.Add([]byte("event: endpoint\ndata: /m\x1b\n\n"))
	f.Fuzz(func(t *testing.T, stream []byte) {
		read := func(r io.Reader) ([]string, error) {
			var got []string
			err := sseEvents(r, 256, func(event string, data []byte) error {
				if len(data) > 256 || len(data) == 0 || event == "" {
					t.Fatalf("event %q with %d bytes of data delivered (limit 256)", event, len(data))
				}
				got = append(got, event+"\x00"+string(data))
				return nil
			})
			return got, err
		}
		whole, err1 := read(bytes.NewReader(stream))
		bytewise, err2 := read(iotest.OneByteReader(bytes.NewReader(stream)))
		if fmt.Sprint(whole) != fmt.Sprint(bytewise) || (err1 == nil) != (err2 == nil) {
			t.Fatalf("read whole: %q, %v; a byte at a time: %q, %v", whole, err1, bytewise, err2)
		}
	})
}
