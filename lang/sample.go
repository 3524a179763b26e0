package lang

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// Sample is one sample "TOOL" block of a server: a call plan makes to the
// tool to fingerprint its result's shape, and verify makes again.
type Sample struct {
	// Tool is the block's label, the tool to call.
	Tool string
	// Arguments is the call's arguments, a JSON object ({} when the block
	// has none).
	Arguments json.RawMessage
	// AllowSideEffects is allow_side_effects: call the tool even though
	// its annotations do not say readOnlyHint = true.
	AllowSideEffects bool `json:",omitempty"`
}

var sampleSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "arguments"}, {Name: "allow_side_effects"}}}

// decodeSample evaluates a sample block; nil when it has errors.
func (s *scope) decodeSample(blk *hcl.Block, diags *hcl.Diagnostics) *Sample {
	content, d := blk.Body.Content(sampleSchema)
	*diags = append(*diags, d...)
	if d.HasErrors() {
		return nil
	}
	tool := blk.Labels[0]
	if tool == "" {
		*diags = append(*diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid tool name",
			Detail:   "A sample block names the tool of the server it calls; the name cannot be empty.",
			Subject:  blk.LabelRanges[0].Ptr(),
		})
		return nil
	}
	out := &Sample{Tool: tool, Arguments: json.RawMessage(`{}`)}
	ok := true
	if a, has := content.Attributes["arguments"]; has {
		v, good := s.value(a, diags)
		switch {
		case !good:
			ok = false
		case v.IsNull():
		case !(v.Type().IsObjectType() || v.Type().IsMapType()):
			*diags = append(*diags, typeError(a, "an object of the tool's arguments, for example { a = 2, b = 3 }", v))
			ok = false
		default:
			b, err := ctyjson.Marshal(v, v.Type())
			if err != nil {
				*diags = append(*diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Invalid sample arguments",
					Detail:   fmt.Sprintf("The value cannot be written as JSON: %v.", err),
					Subject:  a.Expr.Range().Ptr(),
				})
				ok = false
			} else {
				out.Arguments = b
			}
		}
	}
	if a, has := content.Attributes["allow_side_effects"]; has {
		v, good := s.value(a, diags)
		if good {
			conv, err := convert.Convert(v, cty.Bool)
			if err != nil || conv.IsNull() {
				*diags = append(*diags, typeError(a, "true or false", v))
				ok = false
			} else {
				out.AllowSideEffects = conv.True()
			}
		} else {
			ok = false
		}
	}
	if !ok {
		return nil
	}
	return out
}

// sortSamples orders a server's samples by tool, so that the
// configuration (and its digest) does not depend on the blocks' order.
func sortSamples(list []Sample) {
	sort.Slice(list, func(i, j int) bool { return list[i].Tool < list[j].Tool })
}
