package mcp

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// resumeServer is a legacy Streamable HTTP server that ends a tools/call's
// stream before its answer (what a real server does only under load or a
// deploy, so not on demand): stream writes that stream, then it ends;
// resume answers each GET that carries Last-Event-ID (the n-th, from 0).
// A GET without one (the session's own stream) is 405 unless listen says
// otherwise.
type resumeServer struct {
	url    string
	stream func(w http.ResponseWriter, callID string)
	resume func(w http.ResponseWriter, r *http.Request, n int, callID string)
	listen func(w http.ResponseWriter, r *http.Request, n int)

	mu      sync.Mutex
	ended   time.Time // when the call's stream ended
	callID  string
	resumes []resumeGet
	listens []resumeGet
}

type resumeGet struct {
	lastEventID, session string
	at                   time.Time
}

func newResumeServer(t *testing.T, s *resumeServer) *resumeServer {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			s.mu.Lock()
			g := resumeGet{r.Header.Get("Last-Event-ID"), r.Header.Get("Mcp-Session-Id"), time.Now()}
			_, has := r.Header["Last-Event-Id"]
			callID := s.callID
			var n int
			if has {
				s.resumes = append(s.resumes, g)
				n = len(s.resumes) - 1
			} else {
				s.listens = append(s.listens, g)
				n = len(s.listens) - 1
			}
			s.mu.Unlock()
			switch {
			case has && s.resume != nil:
				w.Header().Set("Content-Type", "text/event-stream")
				s.resume(w, r, n, callID)
			case !has && s.listen != nil:
				w.Header().Set("Content-Type", "text/event-stream")
				s.listen(w, r, n)
			default:
				http.Error(w, "no stream", http.StatusMethodNotAllowed)
			}
			return
		}
		b, _ := io.ReadAll(r.Body)
		body := string(b)
		id := string(findID(b))
		switch {
		case strings.Contains(body, `"method":"initialize"`):
			w.Header().Set("Mcp-Session-Id", "s1")
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"r","version":"1"}}}`, id)
		case strings.Contains(body, `"method":"tools/call"`):
			s.mu.Lock()
			s.callID = id
			s.mu.Unlock()
			w.Header().Set("Content-Type", "text/event-stream")
			s.stream(w, id)
			w.(http.Flusher).Flush()
			s.mu.Lock()
			s.ended = time.Now()
			s.mu.Unlock()
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	t.Cleanup(ts.Close)
	s.url = ts.URL
	return s
}

func findID(b []byte) []byte {
	s := string(b)
	i := strings.Index(s, `"id":`)
	if i < 0 {
		return nil
	}
	j := strings.IndexAny(s[i+5:], ",}")
	return []byte(s[i+5 : i+5+j])
}

func (s *resumeServer) gets() ([]resumeGet, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]resumeGet(nil), s.resumes...), s.ended
}

func resumedAnswer(callID string) string {
	return `{"jsonrpc":"2.0","id":` + callID + `,"result":{"content":[{"type":"text","text":"resumed"}]}}`
}

// A call's stream that ends after an event with an id is resumed: a GET
// with that id as Last-Event-ID and the session id, no sooner than the
// server's retry wait, and the answer it brings is the call's. What the
// first stream carried before it ended is delivered too.
func TestHTTPStreamResumed(t *testing.T) {
	s := newResumeServer(t, &resumeServer{
		stream: func(w http.ResponseWriter, _ string) {
			io.WriteString(w, "id: e1\nretry: 300\ndata: \n\n")
			io.WriteString(w, "id: e2\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n")
		},
		resume: func(w http.ResponseWriter, _ *http.Request, _ int, callID string) {
			io.WriteString(w, "id: e3\ndata: "+resumedAnswer(callID)+"\n\n")
		},
	})
	c := dialLines(t, s.url)
	c.handshake()
	c.send(call("2", "x"))
	got := c.until("2")
	if !strings.Contains(got[len(got)-1], `"text":"resumed"`) {
		t.Fatalf("the call was not answered from the resumed stream:\n%s", strings.Join(got, "\n"))
	}
	if !strings.Contains(strings.Join(got, "\n"), "notifications/progress") {
		t.Errorf("the first stream's notification was not delivered:\n%s", strings.Join(got, "\n"))
	}
	gets, ended := s.gets()
	if len(gets) != 1 || gets[0].lastEventID != "e2" || gets[0].session != "s1" {
		t.Fatalf("resumptions %+v, want one GET with Last-Event-ID e2 in session s1", gets)
	}
	if wait := gets[0].at.Sub(ended); wait < 300*time.Millisecond {
		t.Errorf("the GET came %v after the stream ended, before the server's retry of 300 ms", wait)
	}
}

// An id mcpform could not send back as it came (a control character, a
// byte past ASCII, past maxEventID bytes) is ignored: a stream whose only
// ids are such is not resumed, and one with a good id before them resumes
// from the good one.
func TestHTTPStreamResumeRefusesBadIDs(t *testing.T) {
	for _, bad := range []string{"a\x01b", "a\x7fb", "caf\xc3\xa9", "a b", strings.Repeat("x", maxEventID+1)} {
		t.Run(fmt.Sprintf("%.10q", bad), func(t *testing.T) {
			s := newResumeServer(t, &resumeServer{
				stream: func(w http.ResponseWriter, _ string) { io.WriteString(w, "id: "+bad+"\nretry: 0\ndata: \n\n") },
				resume: func(w http.ResponseWriter, _ *http.Request, _ int, callID string) {
					io.WriteString(w, "data: "+resumedAnswer(callID)+"\n\n")
				},
			})
			c := dialLines(t, s.url)
			c.handshake()
			if got := c.until2("2"); !strings.Contains(got, `"code":-32099`) || !strings.Contains(got, "the server's stream ended before it answered") {
				t.Errorf("the answer: %s", got)
			}
			if gets, _ := s.gets(); len(gets) != 0 {
				t.Errorf("resumed with %+v", gets)
			}
		})
	}
	t.Run("good-then-bad", func(t *testing.T) {
		s := newResumeServer(t, &resumeServer{
			stream: func(w http.ResponseWriter, _ string) {
				io.WriteString(w, "id: good\nretry: 0\ndata: \n\nid: ba\x1bd\ndata: \n\n")
			},
			resume: func(w http.ResponseWriter, _ *http.Request, _ int, callID string) {
				io.WriteString(w, "data: "+resumedAnswer(callID)+"\n\n")
			},
		})
		c := dialLines(t, s.url)
		c.handshake()
		if got := c.until2("2"); !strings.Contains(got, `"text":"resumed"`) {
			t.Errorf("the answer: %s", got)
		}
		if gets, _ := s.gets(); len(gets) != 1 || gets[0].lastEventID != "good" {
			t.Errorf("resumptions %+v, want one from the id good", gets)
		}
	})
}

// A server that keeps ending the resumed streams with nothing (only new
// priming ids) is given up on after maxResumes of them, with an error
// that says so, and no GET more.
func TestHTTPStreamResumeGivesUp(t *testing.T) {
	s := newResumeServer(t, &resumeServer{
		stream: func(w http.ResponseWriter, _ string) { io.WriteString(w, "id: p0\nretry: 0\ndata: \n\n") },
		resume: func(w http.ResponseWriter, _ *http.Request, n int, _ string) {
			fmt.Fprintf(w, "id: p%d\nretry: 0\ndata: \n\n", n+1)
		},
	})
	c := dialLines(t, s.url)
	c.handshake()
	got := c.until2("2")
	if !strings.Contains(got, `"code":-32099`) || !strings.Contains(got, "given up") {
		t.Errorf("the answer: %s", got)
	}
	time.Sleep(100 * time.Millisecond)
	gets, _ := s.gets()
	if len(gets) != maxResumes {
		t.Fatalf("%d resumptions, want %d", len(gets), maxResumes)
	}
	for i, g := range gets {
		if want := fmt.Sprintf("p%d", i); g.lastEventID != want {
			t.Errorf("resumption %d carried Last-Event-ID %q, want %q (the latest)", i, g.lastEventID, want)
		}
	}
}

// A 2026-07-28 request's stream is not resumable (that transport has no
// Last-Event-ID): one that ends unanswered fails, whatever ids it carried.
func TestHTTPStreamModernNotResumed(t *testing.T) {
	s := newResumeServer(t, &resumeServer{
		stream: func(w http.ResponseWriter, _ string) { io.WriteString(w, "id: e1\nretry: 0\ndata: \n\n") },
		resume: func(w http.ResponseWriter, _ *http.Request, _ int, callID string) {
			io.WriteString(w, "data: "+resumedAnswer(callID)+"\n\n")
		},
	})
	c := dialLines(t, s.url)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{"` + MetaProtocolVersion + `":"` + ModernVersion + `"}}}`)
	got := c.until("2")
	if l := got[len(got)-1]; !strings.Contains(l, `"code":-32099`) || !strings.Contains(l, "the server's stream ended before it answered") {
		t.Errorf("the answer: %s", l)
	}
	time.Sleep(100 * time.Millisecond)
	if gets, _ := s.gets(); len(gets) != 0 {
		t.Errorf("a 2026-07-28 request's stream was resumed: %+v", gets)
	}
}

// The session's own GET stream is opened again from the last event id it
// named, after its retry wait.
func TestHTTPListenResumed(t *testing.T) {
	s := &resumeServer{
		stream: func(w http.ResponseWriter, _ string) {},
		listen: func(w http.ResponseWriter, r *http.Request, n int) {
			if n > 0 {
				<-r.Context().Done() // the second stays open
				return
			}
			io.WriteString(w, "id: L1\nretry: 200\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n")
		},
	}
	newResumeServer(t, s)
	c := dialLines(t, s.url)
	c.handshake()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.mu.Lock()
		listens := append([]resumeGet(nil), s.listens...)
		resumes := append([]resumeGet(nil), s.resumes...)
		s.mu.Unlock()
		if len(resumes) > 0 {
			if len(listens) != 1 || resumes[0].lastEventID != "L1" || resumes[0].session != "s1" {
				t.Fatalf("GETs %+v then %+v, want the second with Last-Event-ID L1 in session s1", listens, resumes)
			}
			if wait := resumes[0].at.Sub(listens[0].at); wait < 200*time.Millisecond {
				t.Errorf("the stream was opened again %v after the first, before its retry of 200 ms", wait)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session's stream was not opened again from its last event id: %+v", listens)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The retry field: milliseconds in ASCII digits, at most maxRetry; any
// other value is ignored (the SSE standard), and no value is defaultRetry.
func TestStreamCursorRetry(t *testing.T) {
	for v, want := range map[string]time.Duration{
		"": defaultRetry, "500": 500 * time.Millisecond, "0": 0, "1e3": defaultRetry, "-5": defaultRetry,
		" 500": defaultRetry, "soon": defaultRetry, "9999999999999999999999": maxRetry, "600000": maxRetry,
	} {
		var c streamCursor
		c.field("retry", []byte(v))
		if got := c.wait(); got != want {
			t.Errorf("retry: %q waits %v, want %v", v, got, want)
		}
	}
}
