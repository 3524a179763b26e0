package mcp

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestProbePhases: OnPhase hears each phase the probe enters, in order;
// a server that cannot be run never reaches PhaseStarting, and a server
// that fails the handshake never reaches PhaseListing.
func TestProbePhases(t *testing.T) {
	tests := []struct {
		name string
		spec string
		era  Era
		want []Phase
	}{{
		name: "legacy server, detected",
		spec: `{"tools":[` + echoTool + `]}`,
		// server/discover is refused (-32601), then initialize: two
		// handshake requests on one process.
		want: []Phase{PhaseStarting, PhaseHandshake, PhaseHandshake, PhaseListing},
	}, {
		name: "legacy server, forced",
		spec: `{"tools":[` + echoTool + `]}`,
		era:  EraLegacy,
		want: []Phase{PhaseStarting, PhaseHandshake, PhaseListing},
	}, {
		name: "modern server",
		spec: `{"era":"modern","tools":[` + echoTool + `]}`,
		want: []Phase{PhaseStarting, PhaseHandshake, PhaseListing},
	}, {
		name: "exits during the handshake",
		spec: `{"tools":[],"on":{"initialize":{"do":"exit"}}}`,
		era:  EraLegacy,
		want: []Phase{PhaseStarting, PhaseHandshake},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			spec := fake(t, tt.spec)
			spec.Era = tt.era
			spec.Timeout = 10 * time.Second
			spec.ShutdownGrace = 500 * time.Millisecond
			var got []Phase
			spec.OnPhase = func(p Phase) { got = append(got, p) }
			Probe(context.Background(), spec)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("phases (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("cannot be run", func(t *testing.T) {
		var got []Phase
		Probe(context.Background(), ServerSpec{Name: "nope", Command: []string{"/nonexistent/server"}, OnPhase: func(p Phase) { got = append(got, p) }})
		if len(got) != 0 {
			t.Errorf("phases %v, want none", got)
		}
	})
}

func TestPhaseString(t *testing.T) {
	for p, want := range map[Phase]string{PhaseStarting: "starting", PhaseHandshake: "handshake", PhaseListing: "listing", 0: "Phase(0)"} {
		if got := p.String(); got != want {
			t.Errorf("Phase(%d).String() = %q, want %q", int(p), got, want)
		}
	}
}
