package lang

import (
	"bytes"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
)

// Format returns src in canonical style, as terraform fmt does: hclwrite's
// spacing and alignment, an argument whose whole value is one
// interpolation ("${var.x}") written as the bare expression (var.x), CRLF
// line endings as LF, and one trailing newline. A file that does not parse
// is returned unchanged, with the parse errors: fmt never rewrites what it
// cannot read.
func Format(src []byte, filename string) ([]byte, hcl.Diagnostics) {
	if _, diags := parseConfig(src, filename); diags.HasErrors() {
		return src, diags
	}
	// Normalise line endings first: hclwrite keeps CRs as part of tokens.
	norm := bytes.ReplaceAll(src, []byte("\r\n"), []byte("\n"))
	f, diags := hclwrite.ParseConfig(norm, filename, hcl.InitialPos)
	if diags.HasErrors() {
		return src, diags
	}
	unwrapInterpolations(f.Body())
	out := hclwrite.Format(f.Bytes())
	out = bytes.TrimRight(out, "\n")
	if len(out) == 0 {
		return []byte{}, nil
	}
	out = append(out, '\n')
	// Belt and braces: never hand back something that no longer parses.
	if _, diags := hclsyntax.ParseConfig(out, filename, hcl.InitialPos); diags.HasErrors() {
		return src, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Cannot format file",
			Detail:   "Formatting this file would produce invalid HCL (an mcpform bug); it was left as it is.",
		}}
	}
	return out, nil
}

// unwrapInterpolations rewrites `a = "${x}"` as `a = x` in body and its
// blocks, as terraform fmt does.
func unwrapInterpolations(body *hclwrite.Body) {
	for name, attr := range body.Attributes() {
		if inner, ok := soleInterpolation(attr.Expr().BuildTokens(nil)); ok {
			body.SetAttributeRaw(name, inner)
		}
	}
	for _, b := range body.Blocks() {
		unwrapInterpolations(b.Body())
	}
}

// soleInterpolation returns the tokens inside "${ … }" when they are the
// whole of a quoted template, with no other text and no strip markers.
func soleInterpolation(toks hclwrite.Tokens) (hclwrite.Tokens, bool) {
	n := len(toks)
	if n < 5 || toks[0].Type != hclsyntax.TokenOQuote || toks[n-1].Type != hclsyntax.TokenCQuote ||
		toks[1].Type != hclsyntax.TokenTemplateInterp || string(toks[1].Bytes) != "${" ||
		toks[n-2].Type != hclsyntax.TokenTemplateSeqEnd || string(toks[n-2].Bytes) != "}" {
		return nil, false
	}
	inner := toks[2 : n-2]
	depth := 0
	for _, t := range inner {
		switch t.Type {
		case hclsyntax.TokenTemplateInterp, hclsyntax.TokenTemplateControl:
			depth++
		case hclsyntax.TokenTemplateSeqEnd:
			depth--
			if depth < 0 {
				return nil, false // "${a}${b}": two sequences, not one
			}
		case hclsyntax.TokenComment, hclsyntax.TokenNewline:
			return nil, false
		}
	}
	if depth != 0 || len(inner) == 0 {
		return nil, false
	}
	out := make(hclwrite.Tokens, len(inner))
	for i, t := range inner {
		c := *t
		if i == 0 {
			c.SpacesBefore = 1
		}
		out[i] = &c
	}
	return out, true
}
