package runtime

import (
	"testing"
	"time"

	"github.com/mcpform/mcpform/runtime/audit"
)

// A run spins for DefaultSpin unless told otherwise, and never longer than
// MaxSpin (package pipe decides whether spinning can help at all).
func TestSpinOption(t *testing.T) {
	for _, c := range []struct {
		spin, want time.Duration
	}{
		{0, DefaultSpin},
		{time.Second, MaxSpin},
		{-1, -1},
		{50 * time.Microsecond, 50 * time.Microsecond},
	} {
		p, err := newProxy(Options{Name: "s", Entry: fuzzEntry(t, false), Audit: &audit.Log{}, Spin: c.spin})
		if err != nil {
			t.Fatal(err)
		}
		if p.opts.Spin != c.want {
			t.Errorf("Spin %v: the run spins %v; want %v", c.spin, p.opts.Spin, c.want)
		}
	}
}
