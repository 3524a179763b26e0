package mcpform_test

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

// allowedImports is a statement of policy: for each of mcpform's packages
// (by path inside the module; "." is the module root), the mcpform packages
// its code may import, and those its tests may import besides. A package
// that is not listed may not exist: add its row, with the imports its job
// needs, here and in docs/ARCHITECTURE.md ("The import table"), which holds
// the same table for people to read (TestDepsTableMatchesArchitecture keeps
// the two equal).
//
// The table is exact, not a ceiling: every edge in it is one the code uses
// (TestDepsNoUnusedEdge), so a row says what a package depends on, and
// widening a package's reach is a visible change to this file and to the
// document. internal/* packages are listed like any other: they are leaves
// by this table, not by exemption.
//
// In short: policy is the shared leaf vocabulary of sandbox paths, host:port
// entries, limits and taint labels; lang and lock never import each other;
// mcp imports none of the pipeline; surface is the one conversion of a live
// surface into a lock entry, shared by plan (which locks it) and runtime
// (which re-verifies against it); runtime never imports lang (it gets
// evaluated constants through the lock); cmd/mcpform wires them all.
var allowedImports = map[string]allowed{
	".": {},

	"policy":      {},
	"lang":        {imports: []string{"internal/escape", "policy"}},
	"lock":        {imports: []string{"internal/jsonscan", "internal/lockedfile", "internal/strictjson", "policy"}},
	"mcp":         {imports: []string{"internal/escape", "internal/jsonscan", "internal/mutation", "internal/procfd", "internal/strictjson"}, tests: []string{"internal/fakemcp", "internal/npmtest"}},
	"surface":     {imports: []string{"internal/lockedfile", "internal/strictjson", "lock", "mcp"}},
	"pins":        {imports: []string{"internal/escape", "lock"}},
	"pins/npm":    {imports: []string{"internal/escape", "internal/lockedfile", "internal/strictjson", "pins"}, tests: []string{"internal/npmtest"}},
	"pins/image":  {imports: []string{"internal/escape"}, tests: []string{"internal/imagetest"}},
	"pins/pypi":   {imports: []string{"internal/escape", "internal/lockedfile", "internal/strictjson", "pins"}, tests: []string{"internal/pypitest"}},
	"plan":        {imports: []string{"internal/escape", "internal/lockedfile", "internal/strictjson", "judge", "lang", "lock", "mcp", "pins", "pins/image", "pins/npm", "pins/provenance", "pins/pypi", "policy", "runtime/enforce", "surface"}, tests: []string{"internal/fakemcp", "internal/imagetest", "internal/judgetest", "internal/npmtest", "internal/pypitest"}},
	"plan/render": {imports: []string{"internal/escape", "internal/textdiff", "lock", "plan"}, tests: []string{"mcp"}},
	"lock/render": {imports: []string{"internal/escape", "lock"}},
	"apply":       {imports: []string{"lock", "plan"}},
	"approval":    {imports: []string{"internal/escape", "internal/lockedfile", "internal/strictjson", "lock"}, tests: []string{"internal/sigstoretest"}},
	"onboard":     {imports: []string{"internal/escape", "internal/textdiff", "lang"}},
	"oauth":       {imports: []string{"internal/escape", "internal/lockedfile", "mcp"}},

	"pins/provenance": {imports: []string{"internal/escape", "internal/strictjson"}},

	"runtime": {
		imports: []string{"internal/escape", "internal/jsonscan", "internal/mutation", "lock", "mcp", "pins", "policy", "runtime/audit", "runtime/enforce", "runtime/internal/pipe", "runtime/internal/upstream", "runtime/taint", "surface"},
		tests:   []string{"internal/benchclient", "internal/fakemcp", "internal/npmtest", "internal/strictjson"},
	},
	"runtime/taint": {imports: []string{"internal/escape", "internal/lockedfile", "lock", "policy"}},
	"runtime/audit": {imports: []string{"internal/jsonscan", "internal/mutation", "internal/strictjson", "lock", "mcp"}},
	"runtime/enforce": {
		imports: []string{"internal/escape", "internal/jsonscan", "internal/mutation", "lock", "mcp"},
		tests:   []string{"internal/strictjson"},
	},
	"runtime/confine":           {imports: []string{"policy", "runtime/audit", "runtime/egress", "runtime/sandbox"}},
	"runtime/internal/pipe":     {},
	"runtime/internal/upstream": {imports: []string{"mcp", "runtime/internal/pipe"}},
	"runtime/sandbox":           {imports: []string{"internal/mutation", "policy"}, tests: []string{"internal/npmtest", "runtime/egress"}},
	"runtime/egress":            {imports: []string{"internal/mutation", "policy"}},
	"taint/render":              {imports: []string{"internal/escape", "runtime/taint"}},
	"judge":                     {imports: []string{"internal/strictjson"}, tests: []string{"internal/judgetest"}},

	"cmd/mcpform": {
		imports: []string{"apply", "approval", "internal/escape", "internal/mutation", "internal/textdiff", "lang", "lock", "lock/render", "mcp", "oauth", "onboard", "pins", "pins/image", "pins/npm", "pins/provenance", "pins/pypi", "plan", "plan/render", "policy", "runtime", "runtime/audit", "runtime/confine", "runtime/sandbox", "runtime/taint", "surface", "taint/render"},
		tests:   []string{"internal/fakemcp", "internal/imagetest", "internal/judgetest", "internal/npmtest", "internal/pypitest", "internal/sigstoretest"},
	},
	"examples/servers/notes":   {},
	"examples/servers/confirm": {},

	"internal/escape":                {},
	"internal/jsonscan":              {tests: []string{"internal/strictjson"}},
	"internal/strictjson":            {imports: []string{"internal/jsonscan"}},
	"internal/textdiff":              {},
	"internal/lockedfile":            {},
	"internal/mutation":              {},
	"internal/fakemcp":               {},
	"internal/judgetest":             {},
	"internal/procfd":                {},
	"internal/hostile":               {imports: []string{"internal/procfd"}},
	"internal/npmtest":               {},
	"internal/pypitest":              {},
	"internal/imagetest":             {},
	"internal/sigstoretest":          {},
	"internal/benchclient":           {},
	"internal/cmd/proxybench":        {imports: []string{"internal/benchclient", "lock"}},
	"internal/cmd/conformanceclient": {},
	"internal/proxymodel":            {tests: []string{"internal/hostile", "lock", "policy", "runtime", "runtime/audit", "runtime/taint"}},
	"internal/e2e":                   {tests: []string{"internal/hostile", "lock", "policy", "runtime/sandbox"}},
}

// allowed is one package's row: what its code may import, and what its
// tests (package p and package p_test) may import on top of that.
type allowed struct {
	imports []string
	tests   []string
}

// forbiddenExternal lists third-party packages a package must not reach, even
// indirectly: runtime gets evaluated constants through the lock, never HCL.
var forbiddenExternal = map[string][]string{
	"runtime":         {"github.com/hashicorp/hcl", "github.com/zclconf/go-cty", "github.com/google/go-containerregistry"},
	"runtime/sandbox": {"github.com/hashicorp/hcl", "github.com/zclconf/go-cty"},
	"runtime/egress":  {"github.com/hashicorp/hcl", "github.com/zclconf/go-cty"},
	"runtime/taint":   {"github.com/hashicorp/hcl", "github.com/zclconf/go-cty"},
	"runtime/audit":   {"github.com/hashicorp/hcl", "github.com/zclconf/go-cty"},
	"runtime/enforce": {"github.com/hashicorp/hcl", "github.com/zclconf/go-cty"},
	"runtime/confine": {"github.com/hashicorp/hcl", "github.com/zclconf/go-cty"},
	"mcp":             {"github.com/hashicorp/hcl", "github.com/zclconf/go-cty"},
	"lock":            {"github.com/hashicorp/hcl", "github.com/zclconf/go-cty"},
}

const module = "github.com/mcpform/mcpform"

// builds are the configurations whose files are read: a file built only
// on one platform (the sandbox is Linux-only) or only with the mutation tag
// counts as much as any other.
var builds = []struct{ goos, tags string }{
	{"linux", ""},
	{"linux", "mcpform_mutation"},
	{"darwin", ""},
	{"windows", ""},
}

// used is what one package of ours imports of ours, over every build.
type used struct {
	imports map[string]bool // its non-test files
	tests   map[string]bool // its _test.go files, both packages, itself left out
}

var (
	graphOnce sync.Once
	graph     map[string]*used
	graphErr  error
)

// ourPackage returns the package's row name ("." for the root) when path is
// one of mcpform's packages.
func ourPackage(path string) (string, bool) {
	if path == module {
		return ".", true
	}
	return strings.CutPrefix(path, module+"/")
}

// importGraph lists, with go list, every package of the module and the
// packages of ours that its code and its tests import.
func importGraph(t *testing.T) map[string]*used {
	t.Helper()
	graphOnce.Do(func() {
		graph = map[string]*used{}
		for _, b := range builds {
			cmd := exec.Command("go", "list", "-tags="+b.tags, "-f",
				`{{.ImportPath}}|{{join .Imports " "}}|{{join .TestImports " "}} {{join .XTestImports " "}}`, "./...")
			cmd.Env = append(os.Environ(), "GOOS="+b.goos)
			out, err := cmd.Output()
			if err != nil {
				graphErr = fmt.Errorf("go list (GOOS=%s, tags %q): %v", b.goos, b.tags, err)
				return
			}
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				parts := strings.Split(line, "|")
				pkg, ok := ourPackage(parts[0])
				if !ok || len(parts) != 3 {
					graphErr = fmt.Errorf("go list printed %q", line)
					return
				}
				u := graph[pkg]
				if u == nil {
					u = &used{imports: map[string]bool{}, tests: map[string]bool{}}
					graph[pkg] = u
				}
				for i, set := range []map[string]bool{u.imports, u.tests} {
					for _, imp := range strings.Fields(parts[i+1]) {
						if dep, ours := ourPackage(imp); ours && dep != pkg {
							set[dep] = true
						}
					}
				}
			}
		}
	})
	if graphErr != nil {
		t.Fatal(graphErr)
	}
	return graph
}

// TestDepsImportDirections fails on an import the table does not allow, in
// a package's code or in its tests, and on a package the table does not
// list.
func TestDepsImportDirections(t *testing.T) {
	g := importGraph(t)
	for _, pkg := range sortedKeys(g) {
		u := g[pkg]
		row, known := allowedImports[pkg]
		if !known {
			t.Errorf("package %s is not in allowedImports: add its row, with the imports its job needs, here and in docs/ARCHITECTURE.md", pkg)
			continue
		}
		for _, dep := range sortedKeys(u.imports) {
			if !slices.Contains(row.imports, dep) {
				t.Errorf("%s imports %s, which the import table (docs/ARCHITECTURE.md) does not allow", pkg, dep)
			}
		}
		for _, dep := range sortedKeys(u.tests) {
			if !slices.Contains(row.imports, dep) && !slices.Contains(row.tests, dep) {
				t.Errorf("the tests of %s import %s, which the import table (docs/ARCHITECTURE.md) does not allow", pkg, dep)
			}
		}
	}
}

// TestDepsNoUnusedEdge fails on an allowed edge nothing uses, so the table
// can only say what the code does: a package's row lists exactly what its
// code imports, and, apart, exactly what only its tests import.
func TestDepsNoUnusedEdge(t *testing.T) {
	g := importGraph(t)
	for _, pkg := range sortedKeys(allowedImports) {
		row := allowedImports[pkg]
		u, ok := g[pkg]
		if !ok {
			t.Errorf("allowedImports lists %s, which is not a package of the module: remove its row here and in docs/ARCHITECTURE.md", pkg)
			continue
		}
		for _, dep := range row.imports {
			if !u.imports[dep] {
				t.Errorf("allowedImports lets %s import %s, which its code does not import: remove the edge here and in docs/ARCHITECTURE.md", pkg, dep)
			}
			if slices.Contains(row.tests, dep) {
				t.Errorf("allowedImports lists %s -> %s twice: an edge the code uses needs no test-only entry", pkg, dep)
			}
		}
		for _, dep := range row.tests {
			switch {
			case u.imports[dep]:
				t.Errorf("allowedImports has %s -> %s as test-only, and the code imports it: move it to imports", pkg, dep)
			case !u.tests[dep]:
				t.Errorf("allowedImports lets the tests of %s import %s, which they do not: remove the edge here and in docs/ARCHITECTURE.md", pkg, dep)
			}
		}
	}
}

// TestDepsTableMatchesArchitecture parses the import table out of
// docs/ARCHITECTURE.md and compares it, row by row, with allowedImports, so
// that the document and the enforced policy cannot drift apart.
func TestDepsTableMatchesArchitecture(t *testing.T) {
	const (
		path  = "docs/ARCHITECTURE.md"
		begin = "<!-- BEGIN IMPORT TABLE"
		end   = "<!-- END IMPORT TABLE -->"
	)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q … %q section", path, begin, end)
	}
	name := regexp.MustCompile("`([^`]+)`")
	names := func(cell string) []string {
		var out []string
		for _, m := range name.FindAllStringSubmatch(cell, -1) {
			out = append(out, m[1])
		}
		sort.Strings(out)
		return out
	}
	documented := map[string]allowed{}
	for n, line := range strings.Split(doc[i:j], "\n") {
		cells := strings.Split(strings.TrimSpace(line), "|")
		if len(cells) != 5 || cells[0] != "" || cells[4] != "" {
			continue // not a row of the table: the marker, the header, text
		}
		pkg := names(cells[1])
		if len(pkg) != 1 {
			continue // the header row and its rule name no package
		}
		if _, dup := documented[pkg[0]]; dup {
			t.Errorf("%s: the import table lists %s twice (line %d of the section)", path, pkg[0], n+1)
		}
		documented[pkg[0]] = allowed{imports: names(cells[2]), tests: names(cells[3])}
	}
	if len(documented) < 10 {
		t.Fatalf("%s: found only %d rows in the import table: is the parser broken?", path, len(documented))
	}
	for _, pkg := range sortedKeys(allowedImports) {
		want := allowedImports[pkg]
		got, ok := documented[pkg]
		if !ok {
			t.Errorf("%s: the import table has no row for %s, which allowedImports lists", path, pkg)
			continue
		}
		wantImports, wantTests := slices.Sorted(slices.Values(want.imports)), slices.Sorted(slices.Values(want.tests))
		if !slices.Equal(got.imports, wantImports) {
			t.Errorf("%s: %s may import %v by the document, %v by allowedImports", path, pkg, got.imports, wantImports)
		}
		if !slices.Equal(got.tests, wantTests) {
			t.Errorf("%s: the tests of %s may also import %v by the document, %v by allowedImports", path, pkg, got.tests, wantTests)
		}
	}
	for _, pkg := range sortedKeys(documented) {
		if _, ok := allowedImports[pkg]; !ok {
			t.Errorf("%s: the import table has a row for %s, which allowedImports does not list", path, pkg)
		}
	}
}

// TestDepsNoHCLOutsideLang fails when a package that must get evaluated
// constants reaches HCL or cty, even through another package.
func TestDepsNoHCLOutsideLang(t *testing.T) {
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

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
