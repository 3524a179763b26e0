package plan

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpform/mcpform/internal/pypitest"
	"github.com/mcpform/mcpform/lang"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/pins/pypi"
)

func hash64(c byte) string { return strings.Repeat(string(c), 64) }

func requirementsOf(pkgs ...string) []byte {
	var reqs []pypi.Requirement
	for _, p := range pkgs {
		nv, h, _ := strings.Cut(p, "#")
		n, v, _ := strings.Cut(nv, "==")
		if h == "" {
			h = "a"
		}
		reqs = append(reqs, pypi.Requirement{Name: n, Version: v, SHA256: hash64(h[0])})
	}
	data, err := pypi.FormatRequirements(reqs)
	if err != nil {
		panic(err)
	}
	return data
}

func pypiRecord(version, wheel string, tree []byte) *lock.PyPI {
	return &lock.PyPI{Package: "top", Version: version, SHA256: wheel, Index: "https://pypi.org/simple",
		Requirements: lock.FilePin{Path: ".mcpform/pypi/s/requirements.txt", SHA256: digest(tree)}, Script: "top", EntryPoint: "top.main:run"}
}

// TestPyPIChanges: each difference of a PyPI record is a PKG-PYPI change
// of class code, graded by the catalogue; the same record is no change,
// and a new server's record is written with it.
func TestPyPIChanges(t *testing.T) {
	t1 := requirementsOf("dep==1.0", "gone==2.0", "top==1.0.0")
	t2 := requirementsOf("dep==1.1", "new==3.0", "top==1.0.0")
	t3 := requirementsOf("dep==1.0#b", "gone==2.0", "top==1.0.0")
	base := pypiRecord("1.0.0", hash64('a'), t1)
	otherScript := pypiRecord("1.0.0", hash64('a'), t1)
	otherScript.EntryPoint = "top.other:run"
	for _, tt := range []struct {
		name             string
		newServer        bool
		old, live        *lock.PyPI
		oldTree, newTree []byte
		want             []string // rule address action grade
		detail           string
	}{
		{"unchanged", false, base, base, nil, nil, nil, ""},
		{"new server", true, nil, base, nil, nil, nil, ""},
		{"locked before pypi", false, nil, base, nil, nil, []string{"PKG-PYPI-ADDED server.s.pypi create none"}, "top==1.0.0 pinned"},
		{"version", false, base, pypiRecord("1.1.0", hash64('b'), t2), t1, t2,
			[]string{"PKG-PYPI-VERSION-CHANGED server.s.pypi update major"}, "top==1.0.0 is now top==1.1.0; 3 package(s) of the tree differ: +new==3.0, -gone==2.0, dep 1.0 -> 1.1"},
		{"hash", false, base, pypiRecord("1.0.0", hash64('b'), t1), nil, nil,
			[]string{"PKG-PYPI-HASH-CHANGED server.s.pypi.sha256 update major"}, "another wheel than the one locked, under the same version"},
		{"tree", false, base, pypiRecord("1.0.0", hash64('a'), t2), t1, t2,
			[]string{"PKG-PYPI-TREE-CHANGED server.s.pypi.requirements update major"}, "dep 1.0 -> 1.1"},
		{"same version, another wheel in the tree", false, base, pypiRecord("1.0.0", hash64('a'), t3), t1, t3,
			[]string{"PKG-PYPI-TREE-CHANGED server.s.pypi.requirements update major"}, "dep==1.0 another wheel"},
		{"entry point", false, base, otherScript, nil, nil,
			[]string{"PKG-PYPI-TREE-CHANGED server.s.pypi.requirements update major"}, "the tree of top==1.0.0 changed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			details := ""
			for _, c := range pypiChanges("server.s", tt.newServer, tt.old, tt.live, tt.oldTree, tt.newTree) {
				seenRules[c.Rule] = true
				r, ok := LookupRule(c.Rule)
				if !ok || c.Class != Code || c.Grade != r.Grade || c.Security != r.Security {
					t.Errorf("%s: class %s grade %s security %v, not the catalogue's", c.Rule, c.Class, c.Grade, c.Security)
				}
				got = append(got, strings.Join([]string{c.Rule, c.Addr, c.Action.String(), c.Grade.String()}, " "))
				details += c.Detail
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if !strings.Contains(details, tt.detail) {
				t.Errorf("detail %q lacks %q", details, tt.detail)
			}
		})
	}
	for _, rule := range []string{"PKG-PYPI-HASH-CHANGED", "PKG-PYPI-TREE-CHANGED"} {
		if r, _ := LookupRule(rule); !r.Security {
			t.Errorf("%s is not security-relevant", rule)
		}
	}
}

// TestPlanPyPI: a PyPI runner's server is resolved with the real pip from
// real wheels, installed into the cache and probed from there: the argv is
// the venv's python, which answers; a locked record whose stored file
// checks is kept, with the index gone, from the cache; an unpinned runner
// is refused with the command to write.
func TestPlanPyPI(t *testing.T) {
	pypitest.Need(t)
	wheels := pypitest.Wheels(t, filepath.Join(t.TempDir(), "wheels"), "1.0.0")
	pypitest.SetEnv(t, wheels)
	lockDir, cache := t.TempDir(), t.TempDir()
	spec, _, err := pypi.Parse([]string{"uvx", "mcpform-hello-mcp==1.0.0", "--flag"})
	if err != nil {
		t.Fatal(err)
	}
	r := planPyPI(t.Context(), spec, "hello", nil, lockDir, cache)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.rec.Package != "mcpform-hello-mcp" || r.rec.Script != "mcpform-hello-mcp" || r.rec.EntryPoint != pypitest.EntryPoint || r.rec.Index != "" ||
		r.rec.Requirements.Path != ".mcpform/pypi/hello/requirements.txt" || len(r.files) != 1 || r.files[0].Path != r.rec.Requirements.Path ||
		digest(r.files[0].Data) != r.rec.Requirements.SHA256 || r.packages != 2 {
		t.Fatalf("planPyPI = %+v", r)
	}
	if !strings.HasPrefix(r.argv[0], cache) || !strings.HasSuffix(r.argv[0], "/bin/python") || r.argv[len(r.argv)-1] != "--flag" || len(r.reads) != 1 || !strings.HasPrefix(r.reads[0], cache) {
		t.Fatalf("the probe's argv = %q, reads %q", r.argv, r.reads)
	}
	probe := exec.Command(r.argv[0], r.argv[1:]...)
	probe.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + "\n")
	if out, err := probe.Output(); err != nil || !strings.Contains(string(out), `"greet"`) {
		t.Fatalf("the probe's argv answered %s, %v", out, err)
	}

	// Stored beside the lock and locked: kept, installed from the cache
	// with the wheels gone.
	p := filepath.Join(lockDir, filepath.FromSlash(r.rec.Requirements.Path))
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, r.files[0].Data, 0o644)
	os.RemoveAll(wheels)
	old := &lock.Entry{Mcpform: &lock.Settings{PyPI: r.rec}}
	kept := planPyPI(t.Context(), spec, "hello", old, lockDir, cache)
	if kept.err != nil || kept.rec != r.rec || kept.files != nil || kept.argv[0] != r.argv[0] {
		t.Fatalf("planPyPI of an intact locked tree = %+v; want the locked record kept", kept)
	}
	// The stored file changed, no index: the plan fails, saying so.
	os.WriteFile(p, append(r.files[0].Data, '\n'), 0o644)
	failed := planPyPI(t.Context(), spec, "hello", old, lockDir, t.TempDir())
	if failed.err == nil || !strings.Contains(failed.err.Error(), "the lock is not changed") {
		t.Fatalf("planPyPI with a changed stored file and no index = %v", failed.err)
	}
	if _, err := StoredRequirements(lockDir, r.rec); err == nil || !strings.Contains(err.Error(), "is not the one locked") {
		t.Errorf("StoredRequirements of a changed file = %v", err)
	}
}

func TestPlanPyPIRefusesUnpinned(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want string
	}{
		{[]string{"uvx", "mcp-server-fetch"}, `write command = ["uvx", "mcp-server-fetch==VERSION"]`},
		{[]string{"uvx", "mcp-server-fetch>=1"}, `write command = ["uvx", "mcp-server-fetch==VERSION"]`},
		{[]string{"uvx", "--with", "x", "mcp-server-fetch==1.0"}, "cannot pin this command: uvx: option --with"},
	} {
		r, ok := planPyPIServer(t.Context(), &lang.Server{Name: "s", Command: c.argv}, nil, t.TempDir(), t.TempDir())
		if !ok || r.err == nil || !strings.Contains(r.err.Error(), c.want) {
			t.Errorf("planPyPIServer(%q) = %v, %v; want an error with %s", c.argv, ok, r.err, c.want)
		}
	}
	if _, ok := planPyPIServer(t.Context(), &lang.Server{Name: "s", Command: []string{"python3", "-m", "srv"}}, nil, "", ""); ok {
		t.Error("planPyPIServer takes python3 -m for a runner")
	}
}
