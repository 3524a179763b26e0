package lang

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// TestFormatGolden formats testdata/fmt/*.in.hcl and compares with the
// matching .out.hcl (go test -run FormatGolden -update rewrites them).
func TestFormatGolden(t *testing.T) {
	ins, _ := filepath.Glob("testdata/fmt/*.in.hcl")
	if len(ins) == 0 {
		t.Fatal("no fmt golden files")
	}
	for _, in := range ins {
		name := strings.TrimSuffix(filepath.Base(in), ".in.hcl")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			got, diags := Format(src, in)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			golden := strings.TrimSuffix(in, ".in.hcl") + ".out.hcl"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("Format (-want +got):\n%s", diff)
			}
			again, _ := Format(got, in)
			if string(again) != string(got) {
				t.Errorf("Format is not idempotent:\n%s", cmp.Diff(string(got), string(again)))
			}
		})
	}
}

func TestFormatRefusesInvalid(t *testing.T) {
	src := []byte("server \"a\" {\n  command = [\"x\"\n")
	got, diags := Format(src, "bad.hcl")
	if !diags.HasErrors() {
		t.Fatal("no error for a file that does not parse")
	}
	if string(got) != string(src) {
		t.Errorf("Format changed a file that does not parse")
	}
}
