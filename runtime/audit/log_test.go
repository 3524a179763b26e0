package audit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Several run processes append to one audit log at once: each has its own
// open file (flock is per open file, as between processes), and the chain
// must come out whole.
func TestAuditConcurrentAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "audit.jsonl")
	const writers, each = 4, 150
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		a, err := Open(path)
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
	n, err := Verify(f)
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
	a, _ := Open(path)
	a.Write(&Record{Event: "start"})
	a.Close()
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"time":"cut sh`)
	f.Close()
	a, _ = Open(path)
	if err := a.Write(&Record{Event: "start"}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	r, _ := os.Open(path)
	defer r.Close()
	_, err := Verify(r)
	var ce *ChainError
	if !errors.As(err, &ce) || ce.Line != 2 {
		t.Fatalf("verify: %v; want a broken record at line 2", err)
	}
}

// A failed append fails every later commit, whoever appended: a record
// the log's timer or another burst lost must not let the next line out.
func TestAuditFailureIsSticky(t *testing.T) {
	a, err := Open(filepath.Join(t.TempDir(), "audit.jsonl"))
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
	a, err := Open(filepath.Join(t.TempDir(), "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	a.mu.Lock() // what a Queue between Close's flush and its closing leaves
	a.batch = &recordBatch{recs: []*Record{{Event: "request"}}, done: make(chan struct{})}
	a.mu.Unlock()
	if err := a.Commit(); err == nil {
		t.Fatal("Commit of a record the closed log will never write = nil")
	}
}
