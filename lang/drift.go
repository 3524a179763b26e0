package lang

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"

	"github.com/mcpform/mcpform/policy"
)

// on_drift and expose: what run does when the live surface drifts from the
// lock, and which locked items a client sees. Both reach run through the
// lock's policy (policy.Policy.OnDrift and Expose).

var exposeSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "tools"}, {Name: "prompts"}, {Name: "resources"}}}

// decodeOnDrift evaluates on_drift. The default, quarantine, is stored as
// "" so that a server that writes it has the lock of one that does not.
func (s *scope) decodeOnDrift(a *hcl.Attribute, diags *hcl.Diagnostics) string {
	v, ok := s.str(a, diags)
	if !ok {
		return ""
	}
	if err := policy.CheckOnDrift(v); err != nil {
		detail := err.Error() + "."
		if v != "warn" {
			detail += didYouMean(v, policy.DriftModes)
		}
		*diags = append(*diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid on_drift",
			Detail:   detail,
			Subject:  a.Expr.Range().Ptr(),
		})
		return ""
	}
	if v == policy.DriftQuarantine {
		return ""
	}
	return v
}

// decodeExpose evaluates an expose block: glob patterns per kind. An absent
// list exposes every item of its kind, an empty one none. Whether each
// pattern matches an item is plan's to check, against the live surface.
func (s *scope) decodeExpose(b *hcl.Block, diags *hcl.Diagnostics) *policy.Expose {
	x := &policy.Expose{}
	content, d := b.Body.Content(exposeSchema)
	*diags = append(*diags, d...)
	for _, attr := range []struct {
		name string
		dst  *[]string
	}{{"tools", &x.Tools}, {"prompts", &x.Prompts}, {"resources", &x.Resources}} {
		a, ok := content.Attributes[attr.name]
		if !ok {
			continue
		}
		patterns, ok := s.stringList(a, diags)
		if !ok {
			continue
		}
		out := []string{}
		seen := map[string]bool{}
		for i, p := range patterns {
			problem := ""
			if err := policy.CheckPattern(p); err != nil {
				problem = "An expose pattern names items of the server, with * for any run of characters and ? for one: " + err.Error() + "."
			} else if seen[p] {
				problem = fmt.Sprintf("%q is listed twice in %s; remove one.", p, attr.name)
			}
			if problem != "" {
				*diags = append(*diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Invalid expose pattern",
					Detail:   problem,
					Subject:  elemRange(a.Expr, i).Ptr(),
				})
				continue
			}
			seen[p] = true
			out = append(out, p)
		}
		*attr.dst = out
	}
	return x
}
