package upstream

import (
	"context"
	"testing"
	"time"
)

type countingCanceller struct{ n int }

func (c *countingCanceller) cancelled() { c.n++ }

// A request's context behaves as a context.Context to middlewares: Done
// closes and Err is set when the request is cancelled, contexts derived
// from it follow it, context.AfterFunc runs (or stops), and its one watcher
// (the forwarded request) is told once.
func TestCallCtx(t *testing.T) {
	c := &Call{}
	derived, stopDerived := context.WithCancel(c)
	defer stopDerived()
	ran := make(chan struct{})
	context.AfterFunc(c, func() { close(ran) })
	stopped := context.AfterFunc(c, func() { t.Error("a stopped AfterFunc ran") })
	if !stopped() {
		t.Fatal("stop of a pending AfterFunc = false")
	}
	w := &countingCanceller{}
	if !c.watch(w) {
		t.Fatal("watch before cancel = false")
	}
	if c.Err() != nil {
		t.Fatalf("Err before cancel = %v", c.Err())
	}
	done := c.Done()
	c.Cancel()
	c.Cancel()
	select {
	case <-done:
	default:
		t.Fatal("Done not closed by cancel")
	}
	if c.Err() != context.Canceled {
		t.Fatalf("Err = %v, want context.Canceled", c.Err())
	}
	for _, ch := range []<-chan struct{}{derived.Done(), ran} {
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			t.Fatal("a derived context or an AfterFunc did not follow the cancellation")
		}
	}
	if w.n != 1 {
		t.Errorf("the watcher was told %d times, want once", w.n)
	}
	if c.watch(&countingCanceller{}) {
		t.Error("watch after cancel = true: the watcher would never be told")
	}
	select {
	case <-(&Call{err: context.Canceled}).Done():
	default:
		t.Error("Done made after the cancellation is not closed")
	}
}
