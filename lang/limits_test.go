package lang

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
)

// hostileDepth is the nesting the outside reliability suite found to crash
// validate, plan and fmt with a Go stack overflow in hclsyntax's parser.
const hostileDepth = 70_000

const nestingDetail = "This is nested more than 500 levels deep, the most mcpform reads: every bracket, brace, parenthesis, template (\"...\", heredoc) interpolation or %{if}/%{for} directive opens a level, and every operator chained in one expression adds one. The limit keeps a hostile file from exhausting the parser's stack; no real configuration comes near it. Split the expression into local values."

// wantNesting asserts that diags is exactly the nesting diagnostic, at
// line and column of filename.
func wantNesting(t *testing.T, diags hcl.Diagnostics, filename string, line, column int) {
	t.Helper()
	if len(diags) != 1 {
		for _, d := range diags {
			t.Logf("%s: %s", d.Summary, d.Detail)
		}
		t.Fatalf("want one diagnostic, got %d", len(diags))
	}
	d := diags[0]
	if d.Summary != "Nesting too deep" || d.Detail != nestingDetail {
		t.Fatalf("diagnostic = %q: %q", d.Summary, d.Detail)
	}
	got := fmt.Sprintf("%s:%d,%d", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column)
	if want := fmt.Sprintf("%s:%d,%d", filename, line, column); got != want {
		t.Errorf("diagnostic at %s, want %s", got, want)
	}
}

// TestHostileNestingIsRefused is the 70,000-deep mcp.hcl that overflowed
// the stack before any limit: Load (validate, plan) and Format (fmt)
// answer with one diagnostic at the byte where the limit is passed, and
// rendering that diagnostic (which re-parses the file) does not crash.
func TestHostileNestingIsRefused(t *testing.T) {
	// "  x = " takes 6 columns; the locals block and "=" take a level
	// each, a quote and its "${" one each, an object and its "=" one each.
	for _, tc := range []struct {
		open   string
		column int
	}{
		{"[", 7 + (MaxNesting - 2)},
		{"(", 7 + (MaxNesting - 2)},
		{"{a = ", 7 + (MaxNesting/2-1)*5},
		{`"${`, 7 + (MaxNesting/2-1)*3},
	} {
		t.Run(tc.open, func(t *testing.T) {
			deep := strings.Repeat(tc.open, hostileDepth)
			src := "server \"s\" {\n  command = [\"x\"]\n}\nlocals {\n  x = " + deep + "\n}\n"
			dir := writeTree(t, t.TempDir(), map[string]string{"mcp.hcl": src})
			cfg, diags := Load(dir, Options{})
			col := tc.column
			name := filepath.Join(dir, "mcp.hcl")
			wantNesting(t, diags, name, 5, col)
			var buf bytes.Buffer
			if err := WriteDiagnostics(&buf, diags, cfg.Files, false, 80); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(buf.String(), "Error: Nesting too deep") {
				t.Errorf("rendered:\n%s", buf.String())
			}

			out, fdiags := Format([]byte(src), "mcp.hcl")
			wantNesting(t, fdiags, "mcp.hcl", 5, col)
			if string(out) != src {
				t.Error("Format changed a file it refused")
			}
		})
	}
}

// TestHostileNestingEveryEntryPoint covers the other texts lang parses: a
// module's files, an HCL and a JSON -var-file, and a -var value.
func TestHostileNestingEveryEntryPoint(t *testing.T) {
	deep := strings.Repeat("[", hostileDepth)
	jsonDeep := `{"v": ` + deep
	variable := "variable \"v\" {\n  type = list(any)\n  default = []\n}\n"
	t.Run("module", func(t *testing.T) {
		dir := writeTree(t, t.TempDir(), map[string]string{
			"mcp.hcl":   variable + "module \"m\" {\n  source = \"./m\"\n}\n",
			"m/mcp.hcl": "locals {\n  x = " + deep + "\n}\n",
		})
		_, diags := Load(dir, Options{})
		wantNesting(t, diags, filepath.Join(dir, "m", "mcp.hcl"), 2, 7+MaxNesting-2)
	})
	dir := writeTree(t, t.TempDir(), map[string]string{
		"mcp.hcl":          variable,
		"deep.tfvars":      "v = " + deep + "\n",
		"deep.tfvars.json": jsonDeep,
	})
	t.Run("var-file", func(t *testing.T) {
		_, diags := Load(dir, Options{VarFiles: []string{filepath.Join(dir, "deep.tfvars")}})
		wantNesting(t, diags, filepath.Join(dir, "deep.tfvars"), 1, 5+MaxNesting-1)
	})
	t.Run("json var-file", func(t *testing.T) {
		_, diags := Load(dir, Options{VarFiles: []string{filepath.Join(dir, "deep.tfvars.json")}})
		// JSON counts only its own brackets: the object is the first.
		wantNesting(t, diags, filepath.Join(dir, "deep.tfvars.json"), 1, 7+MaxNesting-1)
	})
	t.Run("var", func(t *testing.T) {
		_, diags := Load(dir, Options{Vars: map[string]string{"v": deep}})
		var found bool
		for _, d := range diags {
			found = found || strings.Contains(d.Detail, "Nesting too deep: "+nestingDetail)
		}
		if !found {
			t.Errorf("want the nesting diagnostic inside the variable's, got %v", diags)
		}
	})
}

// TestNestingJustUnderTheLimit loads a configuration nested as deeply as
// the limit allows, evaluates it, and formats it: the limit is not off by
// one, and hcl handles that depth.
func TestNestingJustUnderTheLimit(t *testing.T) {
	n := MaxNesting - 2 // the locals block and the "=" take two levels
	src := "locals {\n  x = " + strings.Repeat("[", n) + strings.Repeat("]", n) + "\n}\n"
	dir := writeTree(t, t.TempDir(), map[string]string{"mcp.hcl": src + "server \"s\" {\n  command = [\"x\"]\n}\n"})
	mustLoad(t, dir, Options{})
	if _, diags := Format([]byte(src), "f.hcl"); diags.HasErrors() {
		t.Fatal(diags)
	}
	over := "locals {\n  x = " + strings.Repeat("[", n+1) + strings.Repeat("]", n+1) + "\n}\n"
	if _, diags := Format([]byte(over), "f.hcl"); len(diags) != 1 || diags[0].Summary != "Nesting too deep" {
		t.Fatalf("one more level: %v", diags)
	}
}

func TestFileTooLarge(t *testing.T) {
	src := "# " + strings.Repeat("x", MaxFileBytes) + "\n"
	dir := writeTree(t, t.TempDir(), map[string]string{"mcp.hcl": src})
	_, diags := Load(dir, Options{})
	name := filepath.Join(dir, "mcp.hcl")
	want := []string{"File too large"}
	if diff := cmp.Diff(want, errorsOf(diags)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if d := diags[0]; d.Detail != name+" is more than 1048576 bytes (1 MiB), the most mcpform reads from one file. Split it: a configuration directory may hold any number of *.mcp.hcl files, and modules hold the rest." {
		t.Errorf("detail: %q", d.Detail)
	}
	if _, diags := Format([]byte(src), "f.hcl"); len(diags) != 1 || diags[0].Summary != "File too large" {
		t.Errorf("Format: %v", diags)
	}
}

// TestScanNesting pins what counts as a level, with a limit of 3: the
// offset is where the limit is first passed, -1 when it never is.
func TestScanNesting(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
		s    syntax
		at   int
	}{
		{"three brackets", "x = [[]]", syntaxConfig, -1},
		{"four, with the =", "x = [[[]]]", syntaxConfig, 6},
		{"siblings", "x = [[], [], [1]]", syntaxConfig, -1},
		{"siblings nesting", "x = [[], [], [[]]]", syntaxConfig, 14},
		{"parens and braces", "({a})", syntaxExpression, -1},
		{"an object's = is an operator", "x = ({a = 1})", syntaxConfig, 8},
		{"in a string", `x = "[[[[(((({{{{"`, syntaxConfig, -1},
		{"escaped quote", `x = "\"[[[[" + "a"`, syntaxConfig, -1},
		{"in comments", "# [[[[\n// ((((\n/* {{{{ \n */ x = 1", syntaxConfig, -1},
		{"unterminated block comment is code", "/* [[[[", syntaxConfig, 4},
		{"in a heredoc", "x = <<EOT\n[[[[\"\nEOT\ny = 1", syntaxConfig, -1},
		{"heredoc marker indented", "x = <<-EOT\n  [[[[\n  EOT\ny = [[", syntaxConfig, -1},
		{"heredoc not closed by a longer line", "x = <<EOT\nEOTX\n\"\nEOT\ny = [1]", syntaxConfig, -1},
		{"not a heredoc", "x = a << [[", syntaxConfig, 9},
		{"interpolation", `x = "${[[]]}"`, syntaxConfig, 7},
		{"escaped interpolation", `x = "$${[[[[" `, syntaxConfig, -1},
		{"directives", `"%{if a}%{if b}%{if c}%{endif}%{endif}%{endif}"`, syntaxExpression, 15},
		{"directives closed", `"%{if a}%{endif}%{if b}%{else}%{endif}"`, syntaxExpression, -1},
		{"operator chain", "x = 1 + 2 + 3 + 4", syntaxConfig, 14},
		{"operator chain in parens across lines", "x = (1 +\n 2 + 3)", syntaxConfig, 12},
		{"newline ends an item", "x = 1 + 2\ny = 1 + 2\nz = 1 + 2", syntaxConfig, -1},
		{"comma ends an item", "x = [1 + 2, 1 + 2, 1 + 2]", syntaxConfig, -1},
		{"index chain", "x = a[b][c][d]", syntaxConfig, 11},
		{"identifier with dashes", "x = my-long-name", syntaxConfig, -1},
		{"object items end at newlines", "{a\n+ a\n+ a\n+ a}", syntaxExpression, -1},
		{"for object reads across lines", "{for k in a :\nk\n+ a\n+ a\n+ a}", syntaxExpression, 24},
		{"expression ignores newlines", "1 +\n 1 +\n 1 +\n 1 +\n 1", syntaxExpression, 17},
		{"non-ASCII code goes to the lexer", "x = \xd3\" [[[", syntaxConfig, 9}, // hcl's tables make \xd3" one identifier
		{"non-ASCII in a string stays cheap", "x = \"\xd3\" [[", syntaxConfig, -1},
		{"json", `{"a": [{"b": 1}]}`, syntaxJSON, -1},
		{"json deep", `{"a": [{"b": []}]}`, syntaxJSON, 13},
		{"json brackets in strings", `{"[[[[": "{{{{\""}`, syntaxJSON, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at, ok := scanNesting([]byte(tc.src), tc.s, 3)
			if ok {
				at = -1
			}
			if at != tc.at {
				t.Errorf("scanNesting(%q) passes 3 at %d, want %d", tc.src, at, tc.at)
			}
		})
	}
}

// TestScanNestingIsLinear feeds the inputs that would make a careless
// scanner quadratic (an unterminated comment searched again and again,
// heredoc openers that are not) without a time limit of its own: go test's
// timeout is the assertion, and each takes milliseconds.
func TestScanNestingIsLinear(t *testing.T) {
	for _, src := range []string{
		strings.Repeat("/*", MaxFileBytes/2),
		strings.Repeat("{/*", MaxFileBytes/3),
		strings.Repeat("<<a", MaxFileBytes/3),
		"<<" + strings.Repeat("a", MaxFileBytes-3) + "\xff",
	} {
		scanNesting([]byte(src), syntaxConfig, MaxNesting)
	}
}
