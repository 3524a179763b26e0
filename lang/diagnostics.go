package lang

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/mcpform/mcpform/internal/escape"
)

// errorAt is an error diagnostic about subject.
func errorAt(subject hcl.Range, summary, detail string) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: subject.Ptr()}
}

// WriteDiagnostics renders diags the way terraform does ("Error: summary",
// "on mcp.hcl line 3, in server "time":", a snippet, the detail), with
// hidden and reordering characters made visible. files is Config.Files;
// width wraps details (0: no wrapping).
func WriteDiagnostics(w io.Writer, diags hcl.Diagnostics, files map[string][]byte, color bool, width uint) error {
	var buf bytes.Buffer
	tw := hcl.NewDiagnosticTextWriter(&buf, parsedFiles(files), width, color)
	if err := tw.WriteDiagnostics(diags); err != nil {
		return err
	}
	_, err := io.WriteString(w, escapeKeepingANSI(buf.String()))
	return err
}

// escapeKeepingANSI escapes hidden characters (from module sources, for
// example) but keeps the colour sequences the text writer added.
func escapeKeepingANSI(s string) string {
	if !strings.Contains(s, "\x1b[") {
		return escape.Multiline(s)
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "\x1b[")
		if i < 0 {
			b.WriteString(escape.Multiline(s))
			return b.String()
		}
		b.WriteString(escape.Multiline(s[:i]))
		j := i + 2
		for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';') {
			j++
		}
		if j < len(s) && s[j] == 'm' {
			b.WriteString(s[i : j+1])
			s = s[j+1:]
			continue
		}
		b.WriteString(escape.String(s[i:j]))
		s = s[j:]
	}
}

// parsedFiles re-parses sources so the text writer can name the block a
// diagnostic is in.
func parsedFiles(files map[string][]byte) map[string]*hcl.File {
	out := make(map[string]*hcl.File, len(files))
	for name, src := range files {
		var f *hcl.File
		if strings.HasSuffix(name, ".json") {
			f, _ = parseJSON(src, name)
		} else {
			f, _ = parseConfig(src, name)
		}
		if f == nil {
			f = &hcl.File{}
		}
		f.Bytes = src
		out[name] = f
	}
	return out
}

// JSONDiagnostics is the output of validate -json: the shape of terraform
// validate -json, with format_version "1.0".
type JSONDiagnostics struct {
	FormatVersion string           `json:"format_version"`
	Valid         bool             `json:"valid"`
	ErrorCount    int              `json:"error_count"`
	WarningCount  int              `json:"warning_count"`
	Diagnostics   []JSONDiagnostic `json:"diagnostics"`
}

// JSONDiagnostic is one diagnostic. Range and Snippet are omitted when the
// diagnostic does not point into a file.
type JSONDiagnostic struct {
	Severity string       `json:"severity"` // "error" or "warning"
	Summary  string       `json:"summary"`
	Detail   string       `json:"detail"`
	Range    *JSONRange   `json:"range,omitempty"`
	Snippet  *JSONSnippet `json:"snippet,omitempty"`
}

// JSONRange is a source range; lines and columns count from 1, bytes from 0.
type JSONRange struct {
	Filename string  `json:"filename"`
	Start    JSONPos `json:"start"`
	End      JSONPos `json:"end"`
}

// JSONPos is one position in a file.
type JSONPos struct {
	Line   int `json:"line"`
	Column int `json:"column"`
	Byte   int `json:"byte"`
}

// JSONSnippet is the source around a diagnostic: the lines of Code start at
// StartLine, and the offsets (in bytes of Code) delimit the subject.
type JSONSnippet struct {
	Context              *string         `json:"context"`
	Code                 string          `json:"code"`
	StartLine            int             `json:"start_line"`
	HighlightStartOffset int             `json:"highlight_start_offset"`
	HighlightEndOffset   int             `json:"highlight_end_offset"`
	Values               []JSONExprValue `json:"values"`
}

// JSONExprValue describes the value of a reference in the expression, as in
// {"traversal": "var.x", "statement": "is \"a\""}. Sensitive values are
// never described.
type JSONExprValue struct {
	Traversal string `json:"traversal"`
	Statement string `json:"statement"`
}

// newJSONDiagnostics builds the validate -json document.
func newJSONDiagnostics(diags hcl.Diagnostics, files map[string][]byte) JSONDiagnostics {
	out := JSONDiagnostics{FormatVersion: "1.0", Diagnostics: []JSONDiagnostic{}}
	parsed := parsedFiles(files)
	for _, d := range diags {
		jd := JSONDiagnostic{Severity: "error", Summary: d.Summary, Detail: d.Detail}
		if d.Severity == hcl.DiagWarning {
			jd.Severity = "warning"
			out.WarningCount++
		} else {
			out.ErrorCount++
		}
		if d.Subject != nil {
			s := *d.Subject
			jd.Range = &JSONRange{Filename: s.Filename,
				Start: JSONPos{s.Start.Line, s.Start.Column, s.Start.Byte},
				End:   JSONPos{s.End.Line, s.End.Column, s.End.Byte}}
			if f, ok := parsed[s.Filename]; ok {
				jd.Snippet = snippet(f, d)
			}
		}
		out.Diagnostics = append(out.Diagnostics, jd)
	}
	out.Valid = out.ErrorCount == 0
	return out
}

// WriteDiagnosticsJSON writes newJSONDiagnostics as indented JSON.
func WriteDiagnosticsJSON(w io.Writer, diags hcl.Diagnostics, files map[string][]byte) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(newJSONDiagnostics(diags, files))
}

func snippet(f *hcl.File, d *hcl.Diagnostic) *JSONSnippet {
	src := f.Bytes
	subj := *d.Subject
	rng := subj
	if d.Context != nil {
		rng = hcl.RangeOver(*d.Context, subj)
	}
	if rng.Start.Byte < 0 || rng.End.Byte > len(src) || rng.Start.Byte > rng.End.Byte {
		return nil
	}
	start := bytes.LastIndexByte(src[:rng.Start.Byte], '\n') + 1
	end := len(src)
	if i := bytes.IndexByte(src[rng.End.Byte:], '\n'); i >= 0 {
		end = rng.End.Byte + i
	}
	if rng.End.Byte > rng.Start.Byte && rng.End.Byte > 0 && src[rng.End.Byte-1] == '\n' {
		end = rng.End.Byte - 1
	}
	// A CRLF file's CR and a BOM are not part of the code shown.
	if end > start && src[end-1] == '\r' {
		end--
	}
	if start == 0 && bytes.HasPrefix(src, utf8BOM) {
		start = len(utf8BOM)
	}
	if end < start {
		end = start
	}
	sn := &JSONSnippet{
		Code:                 string(src[start:end]),
		StartLine:            rng.Start.Line,
		HighlightStartOffset: clamp(subj.Start.Byte-start, 0, end-start),
		HighlightEndOffset:   clamp(subj.End.Byte-start, 0, end-start),
		Values:               []JSONExprValue{},
	}
	if cs, ok := f.Nav.(interface{ ContextString(int) string }); ok {
		if c := cs.ContextString(subj.Start.Byte); c != "" {
			sn.Context = &c
		}
	}
	if d.Expression != nil && d.EvalContext != nil {
		seen := map[string]bool{}
		for _, t := range d.Expression.Variables() {
			v, td := t.TraverseAbs(d.EvalContext)
			if td.HasErrors() || !v.IsWhollyKnown() || v.ContainsMarked() {
				continue
			}
			name := traversalString(t)
			if seen[name] {
				continue
			}
			seen[name] = true
			sn.Values = append(sn.Values, JSONExprValue{Traversal: name, Statement: valueStatement(v)})
		}
		sort.Slice(sn.Values, func(i, j int) bool { return sn.Values[i].Traversal < sn.Values[j].Traversal })
	}
	return sn
}

func clamp(v, lo, hi int) int { return max(lo, min(v, hi)) }

func traversalString(t hcl.Traversal) string {
	var b strings.Builder
	for _, step := range t {
		switch s := step.(type) {
		case hcl.TraverseRoot:
			b.WriteString(s.Name)
		case hcl.TraverseAttr:
			b.WriteString("." + s.Name)
		case hcl.TraverseIndex:
			if s.Key.Type().Equals(cty.String) {
				fmt.Fprintf(&b, "[%q]", s.Key.AsString())
			} else if s.Key.Type().Equals(cty.Number) {
				fmt.Fprintf(&b, "[%s]", s.Key.AsBigFloat().Text('f', -1))
			}
		}
	}
	return b.String()
}

func valueStatement(v cty.Value) string {
	switch {
	case v.IsNull():
		return "is null"
	case v.Type().Equals(cty.String):
		return fmt.Sprintf("is %q", v.AsString())
	case v.Type().Equals(cty.Number):
		return "is " + v.AsBigFloat().Text('f', -1)
	case v.Type().Equals(cty.Bool):
		return fmt.Sprintf("is %t", v.True())
	case v.Type().IsListType() || v.Type().IsTupleType() || v.Type().IsSetType():
		return fmt.Sprintf("is a list with %d elements", v.LengthInt())
	case v.Type().IsObjectType() || v.Type().IsMapType():
		return "is an object"
	}
	return "is " + v.Type().FriendlyName()
}
