package lock

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestUpdateWait holds the directory's lock with a paused writer: a second
// writer with a bounded wait gives up with ErrLocked and writes nothing,
// at once for a wait of 0; with a wait long enough it writes once the
// first is done.
func TestUpdateWait(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp.lock")
	if err := Save(path, sampleFile(t)); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	paused, resume := make(chan struct{}), make(chan struct{})
	first, second := sampleFile(t), sampleFile(t)
	first.Generator, second.Generator = "first", "second"
	firstDone := make(chan error, 1)
	go func() {
		firstDone <- update(path, func([]byte) (*File, error) { return first, nil }, -1, func(string) {
			close(paused)
			<-resume
		})
	}()
	<-paused
	write := func([]byte) (*File, error) { return second, nil }

	for _, wait := range []time.Duration{0, 150 * time.Millisecond} {
		start := time.Now()
		err := UpdateWait(path, wait, write)
		if !errors.Is(err, ErrLocked) {
			t.Fatalf("wait %v: err = %v, want ErrLocked", wait, err)
		}
		if took := time.Since(start); took < wait || took > wait+2*time.Second {
			t.Errorf("wait %v: gave up after %v", wait, took)
		}
		if got, _ := os.ReadFile(path); !bytes.Equal(got, before) {
			t.Fatalf("wait %v: the lock changed while another writer held it", wait)
		}
	}

	secondDone := make(chan error, 1)
	go func() { secondDone <- UpdateWait(path, 10*time.Second, write) }()
	time.Sleep(50 * time.Millisecond)
	close(resume)
	if err := <-firstDone; err != nil {
		t.Fatal(err)
	}
	if err := <-secondDone; err != nil {
		t.Fatalf("a long enough wait: %v", err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Generator != "second" {
		t.Errorf("generator %q, want the waiting writer's, second", got.Generator)
	}
}
