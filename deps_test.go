package mcpform_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// allowedImports is a statement of policy (DESIGN.md section 1): for each of
// mcpform's packages, the mcpform packages it may import. A package not
// listed here may import nothing of ours. policy is the shared leaf
// vocabulary of sandbox paths, host:port entries and taint labels; surface is
// the one conversion of a live surface into a lock entry, shared by plan
// (which locks it) and runtime (which re-verifies against it); the leaf
// helpers under internal/ may be imported by any package.
var allowedImports = map[string][]string{
	"policy":          {},
	"lang":            {"policy"},
	"mcp":             {},
	"lock":            {"policy"},
	"surface":         {"lock", "mcp"},
	"plan":            {"lang", "lock", "mcp", "policy", "surface"},
	"plan/render":     {"plan", "lock", "policy"},
	"apply":           {"plan", "lock", "policy"},
	"runtime":         {"lock", "mcp", "policy", "surface", "runtime/sandbox", "runtime/egress", "runtime/taint"},
	"runtime/taint":   {"lock", "policy"},
	"runtime/sandbox": {"policy"},
	"runtime/egress":  {"policy"},
	"onboard":         {"lang", "policy"},
}

// forbiddenExternal lists third-party packages a package must not reach, even
// indirectly: runtime gets evaluated constants through the lock, never HCL.
var forbiddenExternal = map[string][]string{
	"runtime":         {"github.com/hashicorp/hcl", "github.com/zclconf/go-cty"},
	"runtime/sandbox": {"github.com/hashicorp/hcl", "github.com/zclconf/go-cty"},
	"runtime/egress":  {"github.com/hashicorp/hcl", "github.com/zclconf/go-cty"},
	"runtime/taint":   {"github.com/hashicorp/hcl", "github.com/zclconf/go-cty"},
	"mcp":             {"github.com/hashicorp/hcl", "github.com/zclconf/go-cty"},
	"lock":            {"github.com/hashicorp/hcl", "github.com/zclconf/go-cty"},
}

const module = "github.com/mcpform/mcpform/"

func TestImportDirections(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, ok := strings.CutPrefix(fields[0], module)
		if !ok || pkg == "cmd/mcpform" || strings.HasPrefix(pkg, "examples/") || strings.HasPrefix(pkg, "internal/") {
			continue
		}
		allowed, known := allowedImports[pkg]
		if !known {
			t.Errorf("package %s is not in allowedImports: add it, with the imports its job needs", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			dep, ours := strings.CutPrefix(imp, module)
			// internal/* are leaf helpers (escaping, strict JSON, test
			// fakes) that import none of mcpform's packages themselves.
			if ours && !strings.HasPrefix(dep, "internal/") && !slices.Contains(allowed, dep) {
				t.Errorf("%s imports %s, which DESIGN.md section 1 forbids", pkg, dep)
			}
		}
	}
}

func TestNoHCLOutsideLang(t *testing.T) {
	for pkg, banned := range forbiddenExternal {
		out, err := exec.Command("go", "list", "-deps", "./"+pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps ./%s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, b := range banned {
				if strings.HasPrefix(dep, b) {
					t.Errorf("%s depends on %s: it must get evaluated constants, never HCL", pkg, dep)
				}
			}
		}
	}
}
