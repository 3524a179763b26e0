package lang

import (
	"bytes"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
)

// Format returns src in canonical style (hclwrite's, as terraform fmt),
// with one trailing newline. A file that does not parse is returned
// unchanged, with the parse errors: fmt never rewrites what it cannot read.
func Format(src []byte, filename string) ([]byte, hcl.Diagnostics) {
	if _, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos); diags.HasErrors() {
		return src, diags
	}
	// Normalise line endings first: hclwrite keeps CRs as part of tokens.
	norm := bytes.ReplaceAll(src, []byte("\r\n"), []byte("\n"))
	out := hclwrite.Format(norm)
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
