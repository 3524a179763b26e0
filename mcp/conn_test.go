package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// pipeServer is the far end of a rpcConn: it reads what the rpcConn writes and
// writes what a test says.
type pipeServer struct {
	t    *testing.T
	in   *bufio.Scanner
	out  io.WriteCloser
	conn *rpcConn
}

func newPipeServer(t *testing.T, opts rpcConnOptions) *pipeServer {
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	s := &pipeServer{t: t, in: bufio.NewScanner(sr), out: sw}
	s.conn = newRPCConn(cr, cw, opts)
	t.Cleanup(func() { sw.Close(); sr.Close() })
	return s
}

func (s *pipeServer) recv() *Message {
	s.t.Helper()
	if !s.in.Scan() {
		s.t.Fatalf("server: nothing received: %v", s.in.Err())
	}
	m, err := DecodeMessage(s.in.Bytes())
	if err != nil {
		s.t.Fatalf("server: %v", err)
	}
	return m
}

func (s *pipeServer) send(line string) {
	if _, err := io.WriteString(s.out, line+"\n"); err != nil {
		s.t.Errorf("server: %v", err)
	}
}

func TestConnMultiplexes(t *testing.T) {
	var mu sync.Mutex
	var notes []string
	s := newPipeServer(t, rpcConnOptions{OnNotification: func(m *Message) {
		mu.Lock()
		notes = append(notes, m.Method)
		mu.Unlock()
	}})
	type answer struct {
		res json.RawMessage
		err error
	}
	a, b := make(chan answer), make(chan answer)
	go func() { r, err := s.conn.Call(context.Background(), "a", nil); a <- answer{r, err} }()
	first := s.recv()
	go func() {
		r, err := s.conn.Call(context.Background(), "b", json.RawMessage(`{"x":1}`))
		b <- answer{r, err}
	}()
	second := s.recv()
	if first.Method != "a" || second.Method != "b" || first.ID == second.ID {
		t.Fatalf("received %+v and %+v", first, second)
	}
	// Answer out of order, with a notification in between.
	s.send(`{"jsonrpc":"2.0","id":` + string(second.ID) + `,"error":{"code":-32602,"message":"bad x"}}`)
	s.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	s.send(`{"jsonrpc":"2.0","id":` + string(first.ID) + `,"result":{"ok":true}}`)
	ra, rb := <-a, <-b
	if ra.err != nil || string(ra.res) != `{"ok":true}` {
		t.Errorf("a = %s, %v", ra.res, ra.err)
	}
	var rpcErr *RPCError
	if !errors.As(rb.err, &rpcErr) || rpcErr.Code != -32602 {
		t.Errorf("b = %s, %v; want -32602", rb.res, rb.err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(notes) != 1 || notes[0] != "notifications/tools/list_changed" {
		t.Errorf("notifications %v", notes)
	}
}

func TestConnDeniesServerRequests(t *testing.T) {
	s := newPipeServer(t, rpcConnOptions{})
	s.send(`{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{}}`)
	m := s.recv()
	if m.ID != `"s1"` || m.Error == nil || m.Error.Code != CodeMethodNotFound {
		t.Errorf("answer %+v, want -32601 for s1", m)
	}
}

func TestConnUnknownResponse(t *testing.T) {
	t.Run("fatal", func(t *testing.T) {
		s := newPipeServer(t, rpcConnOptions{})
		done := make(chan error)
		go func() { _, err := s.conn.Call(context.Background(), "a", nil); done <- err }()
		s.recv()
		s.send(`{"jsonrpc":"2.0","id":99,"result":{}}`)
		err := <-done
		var pe *protocolError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), "id 99, which was never sent") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("dropped", func(t *testing.T) {
		s := newPipeServer(t, rpcConnOptions{DropUnknownResponses: true})
		done := make(chan error)
		go func() { _, err := s.conn.Call(context.Background(), "a", nil); done <- err }()
		m := s.recv()
		s.send(`{"jsonrpc":"2.0","id":99,"result":{}}`)
		s.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{}}`)
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
}

func TestConnTimeoutThenLateAnswer(t *testing.T) {
	s := newPipeServer(t, rpcConnOptions{RequestTimeout: 50 * time.Millisecond})
	done := make(chan error)
	go func() { _, err := s.conn.Call(context.Background(), "slow", nil); done <- err }()
	m := s.recv()
	err := <-done
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no answer to slow") {
		t.Fatalf("err = %v", err)
	}
	// The late answer is dropped, not a breach: we did send that id.
	s.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{}}`)
	go func() { _, err := s.conn.Call(context.Background(), "next", nil); done <- err }()
	m = s.recv()
	s.send(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{}}`)
	if err := <-done; err != nil {
		t.Error(err)
	}
}

func TestConnEnds(t *testing.T) {
	for _, tt := range []struct {
		name, line string
		want       string
	}{
		{"non-JSON", "Server listening on :3000", "server wrote non-JSON to stdout: Server listening on :3000"},
		{"invalid message", `{"jsonrpc":"2.0","id":1,"result":{},"Error":1}`, `invalid message: not a valid JSON-RPC 2.0 message: unknown member "Error"`},
		{"eof", "", "server closed the connection"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newPipeServer(t, rpcConnOptions{})
			done := make(chan error)
			go func() { _, err := s.conn.Call(context.Background(), "a", nil); done <- err }()
			s.recv()
			if tt.line == "" {
				s.out.Close()
			} else {
				s.send(tt.line)
			}
			err := <-done
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
			<-s.conn.Done()
			if s.conn.Err() == nil {
				t.Error("Err() = nil after the end")
			}
			if _, err := s.conn.Call(context.Background(), "b", nil); err == nil {
				t.Error("Call after the end succeeded")
			}
		})
	}
}

func TestConnNullIDError(t *testing.T) {
	s := newPipeServer(t, rpcConnOptions{})
	done := make(chan error)
	go func() { _, err := s.conn.Call(context.Background(), "server/discover", nil); done <- err }()
	s.recv()
	s.send(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Received request before initialization was complete"}}`)
	var rpcErr *RPCError
	if err := <-done; !errors.As(err, &rpcErr) || rpcErr.Code != -32600 {
		t.Errorf("err = %v, want the -32600 answer", err)
	}
}
