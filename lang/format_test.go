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

// TestFormatEncoding: Format keeps a file's BOM and line ending (the
// majority's, for a file of mixed endings), so a formatted CRLF file is
// left as it is and one that is not is formatted in CRLF.
func TestFormatEncoding(t *testing.T) {
	const bom = "\xef\xbb\xbf"
	for _, c := range []struct {
		name, in, want string
		enc            Encoding
	}{
		{"formatted CRLF", "server \"a\" {\r\n  command = [\"x\"]\r\n}\r\n", "server \"a\" {\r\n  command = [\"x\"]\r\n}\r\n", Encoding{CRLF: true}},
		{"CRLF", "server \"a\" {\r\n  command=[\"x\"]\r\n  env = []\r\n}\r\n", "server \"a\" {\r\n  command = [\"x\"]\r\n  env     = []\r\n}\r\n", Encoding{CRLF: true}},
		{"BOM", bom + "server \"a\" {\n  command=[\"x\"]\n}\n", bom + "server \"a\" {\n  command = [\"x\"]\n}\n", Encoding{BOM: true}},
		{"formatted BOM CRLF", bom + "server \"a\" {\r\n  command = [\"x\"]\r\n}\r\n", bom + "server \"a\" {\r\n  command = [\"x\"]\r\n}\r\n", Encoding{BOM: true, CRLF: true}},
		{"mostly CRLF", "server \"a\" {\r\n  command = [\"x\"]\n}\r\n", "server \"a\" {\r\n  command = [\"x\"]\r\n}\r\n", Encoding{CRLF: true, Mixed: true}},
		{"mostly LF", "server \"a\" {\n  command = [\"x\"]\r\n}\n", "server \"a\" {\n  command = [\"x\"]\n}\n", Encoding{Mixed: true}},
		{"BOM only", bom, bom, Encoding{BOM: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := EncodingOf([]byte(c.in)); got != c.enc {
				t.Errorf("EncodingOf = %+v, want %+v", got, c.enc)
			}
			got, diags := Format([]byte(c.in), "mcp.hcl")
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			if string(got) != c.want {
				t.Errorf("Format = %q, want %q", got, c.want)
			}
			if again, _ := Format(got, "mcp.hcl"); string(again) != string(got) {
				t.Errorf("not idempotent: %q", again)
			}
		})
	}
}
