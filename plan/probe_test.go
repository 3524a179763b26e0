package plan

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpform/mcpform/mcp"
)

// TestProbeAllPhases: each server's events arrive in order, Progress's
// start first and its end last, with Target.OnPhase's phases between.
func TestProbeAllPhases(t *testing.T) {
	targets := slowTargets(t, 3, 0)
	var mu sync.Mutex
	got := map[string][]string{}
	note := func(name, what string) {
		mu.Lock()
		defer mu.Unlock()
		got[name] = append(got[name], what)
	}
	for i := range targets {
		name := targets[i].Name
		targets[i].OnPhase = func(p mcp.Phase) { note(name, p.String()) }
	}
	results := ProbeAll(context.Background(), targets, 2, func(name string, done bool, r *Result) {
		switch {
		case !done:
			note(name, "begin")
		case r.Err != nil:
			note(name, "failed")
		default:
			note(name, "done")
		}
	})
	want := []string{"begin", "starting", "handshake", "listing", "done"}
	for _, r := range results {
		if r.Err != nil {
			t.Fatalf("%s: %v", r.Name, r.Err)
		}
		if diff := cmp.Diff(want, got[r.Name]); diff != "" {
			t.Errorf("%s: events (-want +got):\n%s", r.Name, diff)
		}
	}
}
