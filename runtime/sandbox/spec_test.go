package sandbox_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mcpform/mcpform/policy"
	"github.com/mcpform/mcpform/runtime/sandbox"
)

func TestSpecFromPolicy(t *testing.T) {
	home, tmp := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(tmp, "work"), 0o755); err != nil {
		t.Fatal(err)
	}
	sb := &policy.Sandbox{
		Filesystem: policy.Filesystem{Read: []string{"~/notes"}, Write: []string{"${TMP}/work"}},
		Network:    policy.Network{Allow: []string{"api.github.com:443"}},
	}
	spec, err := sandbox.SpecFromPolicy(sb, home, tmp, []string{"/x/mcp.lock"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(spec.Read, []string{filepath.Join(home, "notes")}) || !slices.Equal(spec.Write, []string{filepath.Join(tmp, "work")}) ||
		spec.Tmp != tmp || !spec.Network || !slices.Equal(spec.Protect, []string{home, "/x/mcp.lock"}) {
		t.Errorf("spec %+v", spec)
	}
	for name, bad := range map[string]*policy.Sandbox{
		"missing path": {Filesystem: policy.Filesystem{Read: []string{"~/nope"}}},
		"dot-dot":      {Filesystem: policy.Filesystem{Write: []string{"~/notes/../.ssh"}}},
		"relative":     {Filesystem: policy.Filesystem{Read: []string{"notes"}}},
		"bad allow":    {Network: policy.Network{Allow: []string{"api.github.com"}}},
		"no policy":    nil,
	} {
		if _, err := sandbox.SpecFromPolicy(bad, home, tmp, nil); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	spec, err = sandbox.SpecFromPolicy(&policy.Sandbox{}, home, tmp, nil)
	if err != nil || spec.Network {
		t.Errorf("empty policy: %+v %v", spec, err)
	}
}
