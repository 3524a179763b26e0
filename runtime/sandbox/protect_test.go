//go:build linux

package sandbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpform/mcpform/policy"
	"github.com/mcpform/mcpform/runtime/sandbox"
)

// TestStateProtected checks that every piece of mcpform's state is out of
// reach of a write grant, the taint state included, and that relative
// paths (run -audit a.jsonl) are resolved rather than refused.
func TestStateProtected(t *testing.T) {
	home, work := tempDir(t), tempDir(t)
	t.Chdir(work)
	taintDir := filepath.Join(home, ".local", "state", "mcpform", "taint")
	st := sandbox.State{Lock: "mcp.lock", Audit: "a.jsonl", Taint: taintDir}
	protect, err := st.Protected()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range protect {
		if !filepath.IsAbs(p) {
			t.Errorf("protected path %q is not absolute", p)
		}
	}
	for _, want := range []string{filepath.Join(work, "mcp.lock"), filepath.Join(work, "a.jsonl"), taintDir} {
		if !slices.Contains(protect, want) {
			t.Errorf("%s is not protected: %v", want, protect)
		}
	}
	must(t, os.MkdirAll(taintDir, 0o700))
	tmp := tempDir(t)
	cmd := exec.Command("/bin/true")
	for _, tc := range []struct {
		write   string
		refused bool
	}{
		{"~/.local/state/mcpform/taint", true},
		{"~/.local/state", true},
		{"~/.local/state/mcpform/taint/sub", false}, // inside: covers nothing protected
	} {
		sb := &policy.Sandbox{Filesystem: policy.Filesystem{Write: []string{tc.write}}}
		os.MkdirAll(policy.ExpandPath(tc.write, home, tmp), 0o700)
		spec, err := sandbox.SpecFromPolicy(sb, home, tmp, protect)
		if err == nil {
			_, err = sandbox.Grants(cmd, spec)
		}
		switch {
		case tc.refused && err == nil:
			t.Errorf("write = [%q] was accepted; it covers the taint state", tc.write)
		case tc.refused && !strings.Contains(err.Error(), "taint state"):
			t.Errorf("write = [%q]: the error does not say what it covers: %v", tc.write, err)
		case !tc.refused && err != nil:
			t.Errorf("write = [%q]: %v", tc.write, err)
		}
	}
	// A relative audit path used to be refused as "not absolute".
	spec, err := sandbox.SpecFromPolicy(&policy.Sandbox{}, home, tmp, protect)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sandbox.Grants(cmd, spec); err != nil {
		t.Errorf("a sandbox with a relative audit path: %v", err)
	}
}
