package runtime

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

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
	real := s.auditLog.ReplaceFileForTesting(full) // every later append fails with ENOSPC

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
	s.auditLog.ReplaceFileForTesting(real) // closed by Close; /dev/full by the defer
}

// A call's outcome is in the log before its result reaches the client
// (docs/GUARANTEES.md, section 9): when the outcome record cannot be
// written (a full disk after the request was recorded and sent), the client
// does not get the result, and the run stops on the audit failure.
func TestAuditOutcomeBeforeResult(t *testing.T) {
	release := filepath.Join(t.TempDir(), "release")
	cfg, _ := json.Marshal(map[string]any{"era": "legacy", "tools": []json.RawMessage{json.RawMessage(`{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}`)},
		"on": map[string]any{"tools/call": map[string]any{"do": "wait-file", "file": release}}})
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
	real := s.auditLog.ReplaceFileForTesting(full) // every later append fails with ENOSPC
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
	s.auditLog.ReplaceFileForTesting(real)
	log, _ := os.ReadFile(s.audit)
	if !strings.Contains(string(log), `"event":"request","method":"tools/call","id":"2"`) {
		t.Errorf("the call's request record is not in the log:\n%s", log)
	}
	if strings.Contains(string(log), `"event":"result","method":"tools/call","id":"2"`) {
		t.Errorf("the log holds an outcome that could not be written:\n%s", log)
	}
}
