package plan

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpform/mcpform/internal/fakemcp"
	"github.com/mcpform/mcpform/mcp"
)

// TestMain re-executes the test binary as a fake server when asked to
// (internal/fakemcp: no helper binary to build).
func TestMain(m *testing.M) {
	if os.Getenv("MCPFORM_FAKEMCP") == "1" {
		fakemcp.Main()
	}
	os.Exit(m.Run())
}

// slowTargets are n fake servers that each take delay to read their first
// line, as servers started through npx or go run do.
func slowTargets(b testing.TB, n int, delay time.Duration) []Target {
	spec := filepath.Join(b.TempDir(), "slow.json")
	body := fmt.Sprintf(`{"startDelayMs": %d, "tools": [{"name": "t", "inputSchema": {"type": "object"}}]}`, delay.Milliseconds())
	if err := os.WriteFile(spec, []byte(body), 0o644); err != nil {
		b.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	env := func(name string) (string, bool) {
		if name == "MCPFORM_FAKEMCP" {
			return "1", true
		}
		return "", false
	}
	var targets []Target
	for i := range n {
		targets = append(targets, Target{Name: fmt.Sprintf("slow%02d", i), Command: []string{exe, spec},
			Env: []string{"MCPFORM_FAKEMCP"}, LookupEnv: env, Era: mcp.EraLegacy, Timeout: 30 * time.Second})
	}
	return targets
}

// BenchmarkProbeAll20Slow probes 20 servers that each take 500 ms to start.
// Probes run in parallel, so the whole must take about one slow start, not
// twenty: the target is under 1.5x the slowest single probe. The
// ratio is reported as x-slowest.
func BenchmarkProbeAll20Slow(b *testing.B) {
	const delay = 500 * time.Millisecond
	targets := slowTargets(b, 20, delay)
	single := time.Now()
	if r := ProbeAll(context.Background(), targets[:1], 1, nil); r[0].Err != nil {
		b.Fatal(r[0].Err)
	}
	slowest := time.Since(single)
	// parallelism 20 is -parallelism 20; 10 is plan's default
	// (-parallelism), which probes twenty servers in two waves.
	for _, parallelism := range []int{20, 10} {
		b.Run(fmt.Sprintf("parallelism=%d", parallelism), func(b *testing.B) {
			var total time.Duration
			for b.Loop() {
				start := time.Now()
				for _, r := range ProbeAll(context.Background(), targets, parallelism, nil) {
					if r.Err != nil {
						b.Fatal(r.Err)
					}
				}
				total += time.Since(start)
			}
			b.ReportMetric(float64(total)/float64(b.N)/float64(slowest), "x-slowest")
		})
	}
}
