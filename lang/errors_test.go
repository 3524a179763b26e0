package lang

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
)

// expectation is one "# ERROR: <summary>" (or "# WARNING: <summary>")
// comment: a diagnostic with that summary must start on that line.
type expectation struct {
	file     string
	line     int
	severity string
	summary  string
}

func (e expectation) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", filepath.Base(e.file), e.line, e.severity, e.summary)
}

var expectRE = regexp.MustCompile(`#\s*(ERROR|WARNING):\s*(.+?)\s*$`)

func readExpectations(t *testing.T, files map[string][]byte) []expectation {
	t.Helper()
	var out []expectation
	for name, src := range files {
		sc := bufio.NewScanner(bytes.NewReader(src))
		for line := 1; sc.Scan(); line++ {
			if m := expectRE.FindStringSubmatch(sc.Text()); m != nil {
				out = append(out, expectation{name, line, strings.ToLower(m[1]), m[2]})
			}
		}
	}
	sortExpectations(out)
	return out
}

func sortExpectations(es []expectation) {
	sort.Slice(es, func(i, j int) bool {
		if es[i].file != es[j].file {
			return es[i].file < es[j].file
		}
		if es[i].line != es[j].line {
			return es[i].line < es[j].line
		}
		return es[i].summary < es[j].summary
	})
}

func gotExpectations(diags hcl.Diagnostics) []expectation {
	var out []expectation
	for _, d := range diags {
		e := expectation{severity: "error", summary: d.Summary}
		if d.Severity == hcl.DiagWarning {
			e.severity = "warning"
		}
		if d.Subject != nil {
			e.file, e.line = d.Subject.Filename, d.Subject.Start.Line
		}
		out = append(out, e)
	}
	sortExpectations(out)
	return out
}

// TestErrorFiles loads each testdata/error-files/*.hcl as the mcp.hcl of a
// directory, and each testdata/error-dirs/*/ as a configuration, and
// checks that the diagnostics are exactly the ones the files announce.
func TestErrorFiles(t *testing.T) {
	files, _ := filepath.Glob("testdata/error-files/*.hcl")
	dirs, _ := filepath.Glob("testdata/error-dirs/*")
	if len(files) == 0 || len(dirs) == 0 {
		t.Fatal("no error files")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".hcl"), func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "mcp.hcl"), src, 0o644); err != nil {
				t.Fatal(err)
			}
			checkExpectations(t, dir)
		})
	}
	for _, d := range dirs {
		t.Run(filepath.Base(d), func(t *testing.T) { checkExpectations(t, d) })
	}
}

func checkExpectations(t *testing.T, dir string) {
	t.Helper()
	cfg, diags := Load(dir, Options{Version: "0.1.0"})
	want := readExpectations(t, cfg.Files)
	got := gotExpectations(diags)
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(expectation{})); diff != "" {
		var buf bytes.Buffer
		WriteDiagnostics(&buf, diags, cfg.Files, false, 0)
		t.Errorf("diagnostics (-want +got):\n%s\nall diagnostics:\n%s", diff, buf.String())
	}
	for _, d := range diags {
		if d.Severity == hcl.DiagError && d.Detail == "" {
			t.Errorf("%s: %q has no detail saying what to do", d.Subject, d.Summary)
		}
	}
	if want != nil && diags.HasErrors() && len(cfg.Servers) > 0 {
		// Servers with errors are left out; those without are kept, so
		// plan could still show them. Nothing to check beyond not crashing.
	}
}
