package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Several run processes append to one audit log at once: each has its own
// open file (flock is per open file, as between processes), and the chain
// must come out whole.
func TestAuditConcurrentAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "audit.jsonl")
	const writers, each = 4, 150
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		a, err := OpenAudit(path)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if err := a.Write(&Record{Server: fmt.Sprint("s", w), Event: "request", Method: "tools/call", Args: ArgDigests([]byte(`{"k":"secret value"}`))}); err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, err := VerifyAudit(f)
	if err != nil || n != writers*each {
		t.Fatalf("verify: %d records, %v; want %d, nil", n, err, writers*each)
	}
	data, _ := os.ReadFile(path)
	if strings.Contains(string(data), "secret value") {
		t.Error("an argument value reached the audit log")
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("audit log mode %v, want 0600", st.Mode().Perm())
	}
}

// A torn last line (a crash mid-write) is closed off by the next append:
// verify names that line, and the records after it still chain to it.
func TestAuditTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, _ := OpenAudit(path)
	a.Write(&Record{Event: "start"})
	a.Close()
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"time":"cut sh`)
	f.Close()
	a, _ = OpenAudit(path)
	if err := a.Write(&Record{Event: "start"}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	r, _ := os.Open(path)
	defer r.Close()
	_, err := VerifyAudit(r)
	var ce *ChainError
	if !errors.As(err, &ce) || ce.Line != 2 {
		t.Fatalf("verify: %v; want a broken record at line 2", err)
	}
}

// An audit log that stops taking writes (a full disk) stops the run: the
// request whose record cannot be written never reaches the server, nothing
// more reaches the client, and the run ends with an error naming the log.
func TestAuditFailureStopsTheRun(t *testing.T) {
	s := startSession(t, []byte(`{"era": "legacy", `+echoTools+`}`), Options{})
	s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	s.await("1")
	full, err := os.OpenFile("/dev/full", os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	a := s.auditLog
	a.mu.Lock()
	for a.writing {
		a.idle.Wait()
	}
	a.f = full // every later append fails with ENOSPC
	a.mu.Unlock()

	s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"unrecorded"}}}`)
	s.await("2")
	runErr := s.finish()
	if runErr == nil || !strings.Contains(runErr.Error(), "no space left on device") || !strings.Contains(runErr.Error(), "nothing may pass unrecorded") {
		t.Errorf("run ended with %v, want the audit log's failure", runErr)
	}
	if got := strings.Join(s.got, "\n"); strings.Contains(got, `"id":2`) {
		t.Errorf("the client got an answer its call's record does not precede:\n%s", got)
	}
	if log, _ := os.ReadFile(s.log); strings.Contains(string(log), "unrecorded") {
		t.Errorf("the server got a call the audit log does not hold:\n%s", log)
	}
	a.mu.Lock()
	for a.writing {
		a.idle.Wait()
	}
	a.f = nil // closed by Close; /dev/full by the defer
	a.mu.Unlock()
}

// A failed append fails every later commit, whoever appended: a record
// the log's timer or another burst lost must not let the next line out.
func TestAuditFailureIsSticky(t *testing.T) {
	a, err := OpenAudit(filepath.Join(t.TempDir(), "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	full, err := os.OpenFile("/dev/full", os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	real := a.f
	a.f = full
	if err := a.Queue(&Record{Event: "request", Method: "tools/call"}); err != nil {
		t.Fatal(err)
	}
	if err := a.FlushBacklog(1); err == nil {
		t.Fatal("an append to a full disk succeeded")
	}
	a.mu.Lock()
	a.f = real
	a.mu.Unlock()
	if err := a.Commit(); err == nil {
		t.Error("Commit after a lost request record = nil: the request would be let through unrecorded")
	}
	if err := a.Queue(&Record{Event: "request"}); err == nil {
		t.Error("Queue after a failed append = nil")
	}
}

// A record queued while the log was closing (after Close's last append)
// is never written, so committing it must fail, not report success.
func TestAuditCommitAfterClose(t *testing.T) {
	a, err := OpenAudit(filepath.Join(t.TempDir(), "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	a.mu.Lock() // what a Queue between Close's flush and its closing leaves
	a.batch = &auditBatch{recs: []*Record{{Event: "request"}}, done: make(chan struct{})}
	a.mu.Unlock()
	if err := a.Commit(); err == nil {
		t.Fatal("Commit of a record the closed log will never write = nil")
	}
}

// A call's outcome is in the log before its result reaches the client
// (docs/GUARANTEES.md, section 9): when the outcome record cannot be
// written (a full disk after the request was recorded and sent), the client
// does not get the result, and the run stops on the audit failure.
func TestAuditOutcomeBeforeResult(t *testing.T) {
	release := filepath.Join(t.TempDir(), "release")
	cfg, _ := json.Marshal(map[string]any{"era": "legacy", "tools": []json.RawMessage{json.RawMessage(`{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}`)},
		"rules": []any{map[string]any{"on": "tools/call", "do": "wait-file", "text": release}}})
	s := startSession(t, cfg, Options{})
	s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	s.await("1")
	s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"answered"}}}`)
	// The server has the call, so its request record is in the log.
	for deadline := time.Now().Add(20 * time.Second); ; {
		if log, _ := os.ReadFile(s.log); strings.Contains(string(log), `"answered"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server never got the call")
		}
		time.Sleep(5 * time.Millisecond)
	}
	full, err := os.OpenFile("/dev/full", os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	defer full.Close()
	a := s.auditLog
	a.mu.Lock()
	for a.writing {
		a.idle.Wait()
	}
	real := a.f
	a.f = full // every later append fails with ENOSPC
	a.mu.Unlock()
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}

	// The run ends by itself (the client keeps its input open), unless
	// the result reaches the client first.
	var runErr error
	timeout := time.After(30 * time.Second)
wait:
	for {
		select {
		case runErr = <-s.done:
			break wait
		case l, ok := <-s.lines:
			if !ok {
				continue
			}
			s.add(l)
			if strings.Contains(string(l), "answered") {
				t.Fatalf("the client got a result whose outcome the log does not hold: %s", l)
			}
		case <-timeout:
			t.Fatal("the run did not stop when the outcome could not be recorded")
		}
	}
	s.in.Close()
	for l := range s.lines {
		s.add(l)
	}
	if runErr == nil || !strings.Contains(runErr.Error(), "no space left on device") || !strings.Contains(runErr.Error(), "nothing may pass unrecorded") {
		t.Errorf("run ended with %v, want the audit log's failure", runErr)
	}
	if got := strings.Join(s.got, "\n"); strings.Contains(got, "answered") {
		t.Errorf("the client got a result whose outcome the log does not hold:\n%s", got)
	}
	a.mu.Lock()
	for a.writing {
		a.idle.Wait()
	}
	a.f = real
	a.mu.Unlock()
	log, _ := os.ReadFile(s.audit)
	if !strings.Contains(string(log), `"event":"request","method":"tools/call","id":"2"`) {
		t.Errorf("the call's request record is not in the log:\n%s", log)
	}
	if strings.Contains(string(log), `"event":"result","method":"tools/call","id":"2"`) {
		t.Errorf("the log holds an outcome that could not be written:\n%s", log)
	}
}
