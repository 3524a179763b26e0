package lang

import (
	"bytes"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
)

// Format returns src in canonical style, as terraform fmt does: hclwrite's
// spacing and alignment, an argument whose whole value is one
// interpolation ("${var.x}") written as the bare expression (var.x), and
// one trailing newline. A file that does not parse is returned unchanged,
// with the parse errors: fmt never rewrites what it cannot read.
//
// Unlike terraform fmt, which writes LF, Format keeps the file's encoding:
// a UTF-8 byte order mark stays, and the line ending is the file's (CRLF
// when at least half of its lines end so, else LF; a file of mixed endings
// gets that one throughout). Line endings are the editor's and git's
// (core.autocrlf) business, not the configuration's: a Windows checkout of
// a formatted file passes fmt -check, and fmt never rewrites every line of
// a file for them.
func Format(src []byte, filename string) ([]byte, hcl.Diagnostics) {
	if _, diags := parseConfig(src, filename); diags.HasErrors() {
		return src, diags
	}
	enc := EncodingOf(src)
	// Format the text as LF without a BOM: hclwrite keeps CRs as part of
	// tokens.
	f, diags := hclwrite.ParseConfig(enc.Decode(src), filename, hcl.InitialPos)
	if diags.HasErrors() {
		return src, diags
	}
	unwrapInterpolations(f.Body())
	out := hclwrite.Format(f.Bytes())
	out = bytes.TrimRight(out, "\n")
	if len(out) == 0 {
		return enc.Encode(nil), nil
	}
	out = enc.Encode(append(out, '\n'))
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

var utf8BOM = []byte("\xef\xbb\xbf")

// Encoding is how a file is written besides its text: a UTF-8 byte order
// mark and its line ending, as Windows editors save them.
type Encoding struct {
	BOM  bool
	CRLF bool // at least half of the lines end in CRLF
	// Mixed is true when some lines end in CRLF and others in LF alone.
	Mixed bool
}

// EncodingOf returns src's encoding.
func EncodingOf(src []byte) Encoding {
	crlf := bytes.Count(src, []byte("\r\n"))
	lf := bytes.Count(src, []byte("\n")) - crlf
	return Encoding{BOM: bytes.HasPrefix(src, utf8BOM), CRLF: crlf > 0 && crlf >= lf, Mixed: crlf > 0 && lf > 0}
}

// Decode returns src without its BOM and with LF line endings.
func (e Encoding) Decode(src []byte) []byte {
	src = bytes.TrimPrefix(src, utf8BOM)
	return bytes.ReplaceAll(src, []byte("\r\n"), []byte("\n"))
}

// Encode writes LF text in e: its line ending throughout, and its BOM.
func (e Encoding) Encode(text []byte) []byte {
	if e.CRLF {
		text = bytes.ReplaceAll(text, []byte("\n"), []byte("\r\n"))
	}
	if e.BOM {
		text = append(bytes.Clone(utf8BOM), text...)
	}
	if text == nil {
		text = []byte{}
	}
	return text
}

// String names the encoding for a person: "LF", "CRLF, UTF-8 BOM",
// "mixed line endings".
func (e Encoding) String() string {
	s := "LF"
	switch {
	case e.Mixed:
		s = "mixed line endings"
	case e.CRLF:
		s = "CRLF"
	}
	if e.BOM {
		s += ", UTF-8 BOM"
	}
	return s
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
