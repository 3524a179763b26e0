package main

import (
	"os"
	"strings"
	"testing"
)

// TestCIRecipesTrigger checks that both CI recipes run on a change to any
// file plan reads, not only mcp.hcl: *.mcp.hcl files merged with it, var
// files beside it, the lock, modules and the fetched modules' manifest.
func TestCIRecipesTrigger(t *testing.T) {
	for file, want := range map[string][]string{
		"../../examples/ci/github-actions.yml": {`- "*.hcl"`, `- "*.mcp.hcl"`, `- "mcp.lock"`, `- "modules/**"`, `- ".mcpform/modules/modules.json"`},
		"../../examples/ci/gitlab-ci.yml":      {`- "*.hcl"`, `- "*.mcp.hcl"`, `- mcp.lock`, `- modules/**/*`, `- .mcpform/modules/modules.json`},
	} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(string(data), w) {
				t.Errorf("%s: the plan job's filter has no %s", file, w)
			}
		}
	}
}
