package e2e_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestGuaranteesNameRealTests keeps docs/GUARANTEES.md honest: every test
// or fuzz target it names exists (a subtest as its transcript, script or
// hostile mode), every mutation it names is one scripts/mutation.sh runs,
// and every hostile mode is named under some guarantee.
func TestGuaranteesNameRealTests(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "GUARANTEES.md"))
	if err != nil {
		t.Fatal(err)
	}
	funcs := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz)[A-Za-z0-9_]*)\(`)
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if strings.HasSuffix(path, "_test.go") {
			data, _ := os.ReadFile(path)
			for _, m := range decl.FindAllSubmatch(data, -1) {
				funcs[string(m[1])] = true
			}
		}
		return nil
	})
	modeNames := map[string]bool{}
	for _, m := range modes() {
		modeNames[m.name] = true
	}
	named := map[string]bool{}
	refs := regexp.MustCompile("`((?:Test|Fuzz)[A-Za-z0-9_]+)(?:/([^`]+))?`").FindAllStringSubmatch(string(doc), -1)
	if len(refs) < 50 {
		t.Fatalf("found only %d test names in GUARANTEES.md", len(refs))
	}
	for _, r := range refs {
		name, sub := r[1], r[2]
		if !funcs[name] {
			t.Errorf("GUARANTEES.md names %s, which no *_test.go declares", name)
			continue
		}
		if sub == "" {
			continue
		}
		var ok bool
		switch name {
		case "TestTranscripts":
			_, err := os.Stat(filepath.Join(root, "runtime", "testdata", "transcripts", sub+".txtar"))
			ok = err == nil
		case "TestScripts":
			_, err := os.Stat(filepath.Join(root, "cmd", "mcpform", "testdata", "script", sub+".txtar"))
			ok = err == nil
		case "TestHostileModes":
			ok = modeNames[sub]
			named[sub] = true
		}
		if !ok {
			t.Errorf("GUARANTEES.md names %s/%s, which does not exist", name, sub)
		}
	}
	for m := range modeNames {
		if !named[m] {
			t.Errorf("hostile mode %s is not named under any guarantee in GUARANTEES.md", m)
		}
	}
	script, err := os.ReadFile(filepath.Join(root, "scripts", "mutation.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile("Mutations? `([a-z]+)`(?:, `([a-z]+)`)?").FindAllStringSubmatch(string(doc), -1) {
		for _, name := range m[1:] {
			if name != "" && !strings.Contains(string(script), `"`+name+`|`) {
				t.Errorf("GUARANTEES.md names mutation %s, which scripts/mutation.sh does not run", name)
			}
		}
	}
}
