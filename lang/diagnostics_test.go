package lang

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
)

// TestWriteDiagnosticsEscapes: a module fetched from someone else's
// repository may hide text with bidi or zero-width characters; the
// rendered diagnostic shows them escaped, colour codes intact.
func TestWriteDiagnosticsEscapes(t *testing.T) {
	dir := writeTree(t, t.TempDir(), map[string]string{
		"mcp.hcl": "server \"s\" {\n  command = [\"x\"]\n  protocol = \"auto\u202e\u200b\"\n}\n",
	})
	cfg, diags := Load(dir, Options{})
	if !diags.HasErrors() {
		t.Fatal("no error")
	}
	for _, color := range []bool{false, true} {
		var buf bytes.Buffer
		if err := WriteDiagnostics(&buf, diags, cfg.Files, color, 0); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if strings.ContainsAny(out, "\u202e\u200b") || !strings.Contains(out, `\u202e\u200b`) {
			t.Errorf("color=%v: hidden characters not escaped:\n%s", color, out)
		}
		if color && !strings.Contains(out, "\x1b[") {
			t.Errorf("colour codes were lost:\n%q", out)
		}
		if !color && strings.Contains(out, "\x1b") {
			t.Errorf("escape codes without colour:\n%q", out)
		}
	}
}

func TestJSONDiagnostics(t *testing.T) {
	dir := writeTree(t, t.TempDir(), map[string]string{
		"mcp.hcl": "variable \"port\" {\n  default = 0\n  validation {\n    condition     = var.port > 0\n    error_message = \"port must be positive.\"\n  }\n}\n",
	})
	cfg, diags := Load(dir, Options{})
	var buf bytes.Buffer
	if err := WriteDiagnosticsJSON(&buf, diags, cfg.Files); err != nil {
		t.Fatal(err)
	}
	var got JSONDiagnostics
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	file := dir + "/mcp.hcl"
	ctx := `variable "port"`
	want := JSONDiagnostics{
		FormatVersion: "1.0", Valid: false, ErrorCount: 1,
		Diagnostics: []JSONDiagnostic{{
			Severity: "error",
			Summary:  "Invalid value for variable",
			Detail:   "port must be positive.\n\nThe value of var.port comes from its default; this was checked by the validation rule at " + file + ":3,3.",
			Range:    &JSONRange{Filename: file, Start: JSONPos{2, 13, 30}, End: JSONPos{2, 14, 31}},
			Snippet: &JSONSnippet{
				Context: &ctx, Code: "  default = 0", StartLine: 2,
				HighlightStartOffset: 12, HighlightEndOffset: 13,
				Values: []JSONExprValue{{Traversal: "var.port", Statement: "is 0"}},
			},
		}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestJSONSnippetCRLFAndBOM: a snippet of a CRLF file with a BOM holds the
// code alone, and its offsets still delimit the subject.
func TestJSONSnippetCRLFAndBOM(t *testing.T) {
	src := []byte("\xef\xbb\xbfserver \"a\" { timeout = \"x\" }\r\nserver \"b\" {\r\n  timeout = \"y\"\r\n}\r\n")
	for _, line := range []int{1, 3} {
		var d *hcl.Diagnostic
		text := string(src)
		word := `"x"`
		if line == 3 {
			word = `"y"`
		}
		at := strings.Index(text, word)
		d = &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "s", Subject: &hcl.Range{
			Filename: "mcp.hcl",
			Start:    hcl.Pos{Line: line, Byte: at},
			End:      hcl.Pos{Line: line, Byte: at + len(word)},
		}}
		out := newJSONDiagnostics(hcl.Diagnostics{d}, map[string][]byte{"mcp.hcl": src})
		sn := out.Diagnostics[0].Snippet
		if sn == nil {
			t.Fatalf("line %d: no snippet", line)
		}
		if strings.ContainsAny(sn.Code, "\r\ufeff") {
			t.Errorf("line %d: snippet code %q holds a CR or the BOM", line, sn.Code)
		}
		if got := sn.Code[sn.HighlightStartOffset:sn.HighlightEndOffset]; got != word {
			t.Errorf("line %d: highlight %q, want %q", line, got, word)
		}
	}
}
