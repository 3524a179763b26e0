package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpform/mcpform/runtime/audit"
)

const echoTools = `"tools": [{"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}]`

// A server that stops reading its input must not wedge the client: every
// request is answered (with an error) within the timeouts, ping, which the
// proxy answers itself, stays fast throughout, and once a write has waited
// WriteTimeout the server is stopped and the run ends with the reason.
func TestHostileServerStopsReading(t *testing.T) {
	cfg := `{"era": "legacy", "on": {"tools/call": {"do": "stop-reading"}}, ` + echoTools + `}`
	s := startSession(t, []byte(cfg), Options{WriteTimeout: 300 * time.Millisecond, RequestTimeout: time.Second, MaxInFlight: 400})
	s.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	s.await(`"init"`)
	big := strings.Repeat("x", 32<<10)
	const n = 350 // enough to fill the pipe (64 KiB) and the proxy's queue (256)
	start := time.Now()
	for i := 0; i < n; i++ {
		s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":%q}}}`, i, big))
	}
	pingStart := time.Now()
	s.send(`{"jsonrpc":"2.0","id":"ping","method":"ping"}`)
	s.await(`"ping"`)
	if d := time.Since(pingStart); d > 500*time.Millisecond {
		t.Errorf("ping took %v while the server was stalled", d)
	}
	// The proxy gives up on the server once a write has waited
	// WriteTimeout: it stops it and ends, so the client sees an error for
	// each request it was answered, and then the end of the stream.
	done := make(chan error, 1)
	go func() { done <- s.finish() }()
	var runErr error
	select {
	case runErr = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the proxy did not end with a stalled server")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("giving up on a stalled server took %v", d)
	}
	// Whether the run ends on its own (the server was stopped) or because
	// the client closed its input first, the stall is named.
	all := strings.Join(s.got, "\n")
	if runErr != nil {
		all += "\n" + runErr.Error()
	}
	if !strings.Contains(all, "has not read its input for 300ms") {
		t.Errorf("the stalled input is not named; run: %v", runErr)
	}
	answered := 0
	for _, l := range s.got {
		if strings.Contains(l, `"result"`) && !strings.Contains(l, `"id":"`) {
			t.Errorf("a request to a stalled server got a result: %.200s", l)
		}
		if strings.Contains(l, `"error"`) {
			answered++
		}
	}
	if answered == 0 {
		t.Error("no request got an error")
	}
}

func TestClientEOFEndsProcessGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	cfg, _ := json.Marshal(map[string]any{"era": "legacy", "childPidFile": pidFile, "tools": []json.RawMessage{json.RawMessage(`{"name":"echo","inputSchema":{"type":"object"}}`)}})
	s := startSession(t, cfg, Options{})
	s.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
	s.await("1")
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(data))
	if err := s.finish(); err != nil {
		t.Fatalf("run: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the server's child %d still runs after the client closed its input", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A flood of list_changed notifications with a stable surface neither
// quarantines nor wedges the proxy: re-verifications are coalesced.
func TestHostileListChangedFlood(t *testing.T) {
	send := make([]json.RawMessage, 200)
	for i := range send {
		send[i] = json.RawMessage(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	}
	cfg, _ := json.Marshal(map[string]any{"era": "legacy", "on": map[string]any{"tools/call": map[string]any{"do": "send", "send": send}},
		"tools": []json.RawMessage{json.RawMessage(`{"name":"echo","inputSchema":{"type":"object"}}`)}})
	s := startSession(t, cfg, Options{})
	for i := 0; i < 20; i++ {
		s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{}}}`, i))
		s.await(strconv.Itoa(i))
	}
	for _, l := range s.got {
		if strings.Contains(l, "-32002") || strings.Contains(l, `"error"`) {
			t.Fatalf("unexpected error under a list_changed flood: %s", l)
		}
	}
	if err := s.finish(); err != nil {
		t.Fatal(err)
	}
}

// A client's "_meta" spelled with escapes, carrying its own envelope keys,
// must not give the server a second _meta or a second protocol version.
func TestEscapedMetaIsNotSmuggled(t *testing.T) {
	cfg := `{"era": "modern", ` + echoTools + `}`
	s := startSession(t, []byte(cfg), Options{})
	s.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{},"\u005fmeta":{"io.modelcontextprotocol\/protocolVersion":"1999-01-01","x":1}}}`)
	s.await("1")
	if err := s.finish(); err != nil {
		t.Fatal(err)
	}
	log, _ := os.ReadFile(s.log)
	for _, l := range strings.Split(strings.TrimSpace(string(log)), "\n") {
		if !strings.Contains(l, "tools/call") {
			continue
		}
		if strings.Contains(l, "1999") || strings.Count(l, "meta") != 1 {
			t.Errorf("the server got a smuggled envelope: %s", l)
		}
	}
}

// A server that never answers a call must not keep the run alive once the
// client closed its input: after DrainTimeout the call is cancelled (the
// server is told), the run ends, and the server is stopped.
func TestHostileServerNeverAnswersAtClose(t *testing.T) {
	cfg := `{"era": "legacy", "on": {"tools/call": {"do": "silent"}}, ` + echoTools + `}`
	s := startSession(t, []byte(cfg), Options{DrainTimeout: 200 * time.Millisecond})
	s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	s.await("1")
	s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"never"}}}`)
	s.settle(100 * time.Millisecond)
	if err := s.finish(); err != nil {
		t.Errorf("run ended with %v, want nil (the client closed its input)", err)
	}
	if log, _ := os.ReadFile(s.log); !strings.Contains(string(log), `"method":"notifications/cancelled"`) {
		t.Errorf("the server was not told the call was cancelled:\n%s", log)
	}
}

// While a server that stopped reading has a full input, the client's
// reader must not wait for it: pings are answered at once, long before the
// write to the server gives up (WriteTimeout).
func TestHostileServerStopsReadingPingsStillAnswered(t *testing.T) {
	cfg := `{"era": "legacy", "on": {"tools/call": {"do": "stop-reading"}}, ` + echoTools + `}`
	const writeTimeout = 10 * time.Second
	s := startSession(t, []byte(cfg), Options{WriteTimeout: writeTimeout, DrainTimeout: 200 * time.Millisecond, MaxInFlight: 400})
	s.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	s.await(`"init"`)
	big := strings.Repeat("x", 32<<10)
	start := time.Now()        // the client's writes block too while its reader waits
	for i := 0; i < 100; i++ { // 3 MiB: far more than the pipe holds
		s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":%q}}}`, i, big))
	}
	s.send(`{"jsonrpc":"2.0","id":"ping","method":"ping"}`)
	s.await(`"ping"`)
	if d := time.Since(start); d > writeTimeout/2 {
		t.Fatalf("the calls and a ping took %v while the server's input was full: the client's reader waited for the server", d)
	}
	s.finish()
}

// A write that filled the server's input set a deadline for the rest; the
// stream must not keep it: a later call, after the deadline has long
// passed, still goes through.
func TestLargeCallThenIdleThenCall(t *testing.T) {
	s := startSession(t, []byte(`{"era": "legacy", `+echoTools+`}`), Options{WriteTimeout: 300 * time.Millisecond})
	s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	s.await("1")
	s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("x", 256<<10) + `"}}}`)
	s.await("2")
	time.Sleep(600 * time.Millisecond) // twice the write timeout
	s.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
	s.await("3")
	if got := strings.Join(s.got, "\n"); !strings.Contains(got, `"id":3,"result"`) {
		t.Errorf("the call after an idle moment failed:\n%s", got[max(0, len(got)-500):])
	}
	if err := s.finish(); err != nil {
		t.Errorf("run ended with %v", err)
	}
}

// A client that closes its input right after a call with a large answer
// still gets the whole answer: the run waits for it to be written before
// it returns (and the process exits), even when the client reads slowly,
// and even when another call never ends and is cancelled at DrainTimeout.
func TestLargeAnswerWrittenBeforeTheRunEnds(t *testing.T) {
	opts := runOptions(t, `{"era": "legacy", "on": {"tools/call": {"name": "hang", "do": "silent"}}, "tools": [`+
		`{"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}},`+
		`{"name": "hang", "inputSchema": {"type": "object"}}]}`)
	outR, outW, err := os.Pipe() // a real, non-blocking pipe, as a client gives
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close()
	// The client below reads 100 KiB/s: by DrainTimeout (2 s) it has read
	// 200 KiB and the pipe holds 64 more, so the answer is still being
	// written then; it is read whole after 3.4 s, within the DrainTimeout
	// closeClient waits once drain is over.
	big := strings.Repeat("y", 336<<10)
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hang","arguments":{}}}` + "\n" +
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + big + `"}}}` + "\n")
	read := make(chan []byte)
	go func() { // a client that reads slowly
		var all []byte
		buf := make([]byte, 4<<10)
		for {
			n, err := outR.Read(buf)
			all = append(all, buf[:n]...)
			if err != nil {
				read <- all
				return
			}
			time.Sleep(40 * time.Millisecond)
		}
	}()
	opts.Stdin, opts.Stdout, opts.DrainTimeout = in, outW, 2*time.Second
	err = Run(context.Background(), opts)
	outW.Close() // what the process's exit does
	if err != nil {
		t.Fatal(err)
	}
	all := <-read
	if !bytes.Contains(all, []byte(big+`\"}"}]}}`+"\n")) { // the echo's text is the arguments' JSON
		t.Errorf("the answer was cut: %d bytes reached the client, want more than %d; it ends %q", len(all), len(big), all[max(0, len(all)-80):])
	}
}

// Once Run has returned (here: the server exited mid-call), nothing more is
// read from the client or written to it: a late ping gets no answer from a
// run that is over.
func TestNothingAfterTheRunEnds(t *testing.T) {
	opts := runOptions(t, `{"era": "legacy", "on": {"tools/call": {"do": "exit", "status": 3}}, `+echoTools+`}`)
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inW.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`+"\n"+
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"bye"}}}`+"\n")
	read := make(chan string)
	go func() { all, _ := io.ReadAll(outR); read <- string(all) }()
	opts.Stdin, opts.Stdout = inR, outW
	err = Run(context.Background(), opts)
	var exit *ServerExitError
	if !errors.As(err, &exit) {
		t.Fatalf("run ended with %v, want the server's exit", err)
	}
	io.WriteString(inW, `{"jsonrpc":"2.0","id":"late","method":"ping"}`+"\n")
	time.Sleep(300 * time.Millisecond)
	outW.Close()
	if got := <-read; strings.Contains(got, `"late"`) {
		t.Errorf("a run that had ended answered the client:\n%s", got)
	}
}

// runOptions are the Options of a run of the test server with cfgJSON, for
// tests that drive Run themselves (with real pipes or their own context);
// Stdin and Stdout are the test's to set.
func runOptions(t *testing.T, cfgJSON string) Options {
	t.Helper()
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "upstream.json")
	cfg := writeUpstream(t, []byte(cfgJSON), cfgPath, filepath.Join(dir, "upstream.log"))
	audit, err := audit.Open(filepath.Join(dir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { audit.Close() })
	return Options{Name: "fake", Entry: lockFor(t, cfg, cfgPath), Stderr: io.Discard, Audit: audit,
		Session: "s", LookupEnv: fakeEnv, ShutdownGrace: 500 * time.Millisecond}
}

// A run ended by its context (a signal) still ends in order: the calls in
// flight end first, and the "exit" record is the log's last.
func TestContextEndsTheRunInOrder(t *testing.T) {
	opts := runOptions(t, `{"era": "legacy", "on": {"tools/call": {"do": "silent"}}, `+echoTools+`}`)
	inR, inW := io.Pipe()
	defer inW.Close()
	var out syncBuffer
	opts.Stdin, opts.Stdout, opts.DrainTimeout = inR, &out, 300*time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, opts) }()
	io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`+"\n")
	io.WriteString(inW, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"never answered"}}}`+"\n")
	time.Sleep(200 * time.Millisecond)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("run ended with %v, want context.Canceled", err)
	}
	opts.Audit.Close()
	log, err := os.ReadFile(opts.Audit.Path())
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(log)), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, `"event":"exit"`) {
		t.Errorf("the log's last record is not the exit:\n%s", strings.Join(lines, "\n"))
	}
	if !strings.Contains(string(log), `"event":"result","method":"tools/call","id":"2"`) {
		t.Errorf("the call in flight has no outcome record:\n%s", log)
	}
}

// The server process is watched, not only its output (docs/GUARANTEES.md,
// section 12): when it exits mid-call while a process that is none of its
// descendants holds its stdout (so nothing mcpform can end; here the test,
// which opened the server's fd 1 through /proc), the call is still
// answered, and the run ends naming the held output.
func TestServerExitWhileItsOutputIsHeld(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "server.pid")
	cfg, _ := json.Marshal(map[string]any{"era": "legacy", "pidFile": pidFile, "tools": []json.RawMessage{json.RawMessage(`{"name":"echo","inputSchema":{"type":"object"}}`)},
		"on": map[string]any{"tools/call": map[string]any{"do": "exit", "status": 3}}})
	s := startSession(t, cfg, Options{})
	s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	s.await("1")
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	held, err := os.OpenFile("/proc/"+string(data)+"/fd/1", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("cannot open the server's stdout through /proc: %v", err)
	}
	defer held.Close()
	s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
	s.await("2")
	if got := strings.Join(s.got, "\n"); !strings.Contains(got, `"id":2,"error":{"code":-32603`) {
		t.Errorf("the call in flight got no -32603 when the server exited:\n%s", got)
	}
	runErr := s.finish()
	var exit *ServerExitError
	if !errors.As(runErr, &exit) || !strings.Contains(runErr.Error(), "its output stayed open") {
		t.Errorf("run ended with %v, want the server's exit with its held output named", runErr)
	}
}
