package lang

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// envVarPrefix is the prefix of environment variables that set root
// variables: MCPFORM_VAR_notes_dir sets var.notes_dir.
const envVarPrefix = "MCPFORM_VAR_"

// sensitive marks values of sensitive variables and everything computed
// from them, so no diagnostic or output shows them.
type sensitiveMark struct{}

var sensitive = sensitiveMark{}

// variable is a decoded variable block.
type variable struct {
	name        string
	typ         cty.Type
	defaults    *typeexpr.Defaults
	def         cty.Value // cty.NilVal when there is no default
	defRange    hcl.Range
	description string
	sensitive   bool
	nullable    bool
	validations []*validation
	declRange   hcl.Range
}

type validation struct {
	condition hcl.Expression
	message   hcl.Expression
	rng       hcl.Range
}

var variableSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "type"}, {Name: "default"}, {Name: "description"}, {Name: "sensitive"}, {Name: "nullable"}},
	Blocks:     []hcl.BlockHeaderSchema{{Type: "validation"}},
}

var validationSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "condition", Required: true}, {Name: "error_message", Required: true}},
}

func decodeVariable(b *hcl.Block) (*variable, hcl.Diagnostics) {
	v := &variable{name: b.Labels[0], typ: cty.DynamicPseudoType, declRange: b.DefRange, nullable: true}
	content, diags := b.Body.Content(variableSchema)
	if a, ok := content.Attributes["type"]; ok {
		ty, defaults, d := typeexpr.TypeConstraintWithDefaults(a.Expr)
		diags = append(diags, d...)
		if !d.HasErrors() {
			v.typ, v.defaults = ty, defaults
		}
	}
	if a, ok := content.Attributes["description"]; ok {
		s, ok, d := literalString(a, "description")
		diags = append(diags, d...)
		if ok {
			v.description = s
		}
	}
	for _, flag := range []struct {
		name string
		dst  *bool
	}{{"sensitive", &v.sensitive}, {"nullable", &v.nullable}} {
		a, ok := content.Attributes[flag.name]
		if !ok {
			continue
		}
		val, d := a.Expr.Value(nil)
		diags = append(diags, d...)
		if d.HasErrors() {
			continue
		}
		if val.IsNull() || !val.Type().Equals(cty.Bool) {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Incorrect attribute value type",
				Detail:   fmt.Sprintf("%s must be true or false.", flag.name),
				Subject:  a.Expr.Range().Ptr(),
			})
			continue
		}
		*flag.dst = val.True()
	}
	if a, ok := content.Attributes["default"]; ok {
		val, d := a.Expr.Value(nil)
		diags = append(diags, d...)
		if !d.HasErrors() {
			if v.defaults != nil {
				val = v.defaults.Apply(val)
			}
			conv, err := convert.Convert(val, v.typ)
			if err != nil {
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Invalid default value for variable",
					Detail:   fmt.Sprintf("This default value is not compatible with the variable's type constraint: %s. Change the default or the type.", convertErrorString(err)),
					Subject:  a.Expr.Range().Ptr(),
				})
				// Counts as a default, so no "required" error follows.
				v.def, v.defRange = cty.DynamicVal, a.Expr.Range()
			} else {
				v.def, v.defRange = conv, a.Expr.Range()
			}
		}
	}
	for _, vb := range content.Blocks {
		vc, d := vb.Body.Content(validationSchema)
		diags = append(diags, d...)
		cond, ok1 := vc.Attributes["condition"]
		msg, ok2 := vc.Attributes["error_message"]
		if !ok1 || !ok2 {
			continue
		}
		bad := false
		for _, t := range cond.Expr.Variables() {
			if t.RootName() == "var" && len(t) > 1 {
				if ta, ok := t[1].(hcl.TraverseAttr); ok && ta.Name == v.name {
					continue
				}
			}
			bad = true
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid reference in variable validation",
				Detail:   fmt.Sprintf("The condition of a validation for var.%s can refer only to var.%s itself.", v.name, v.name),
				Subject:  t.SourceRange().Ptr(),
			})
		}
		if !bad && len(cond.Expr.Variables()) == 0 {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid variable validation condition",
				Detail:   fmt.Sprintf("The condition does not refer to var.%s, so it cannot check its value. Write a condition about var.%s.", v.name, v.name),
				Subject:  cond.Expr.Range().Ptr(),
			})
			bad = true
		}
		if !bad {
			v.validations = append(v.validations, &validation{condition: cond.Expr, message: msg.Expr, rng: vb.DefRange})
		}
	}
	return v, diags
}

// valueSource says where a variable's value came from, for diagnostics.
type valueSource struct {
	what string     // "-var", "MCPFORM_VAR_x", "the default", a file …
	rng  *hcl.Range // where it is written, when that is in a file
}

// rootVariables collects the root module's variable values from -var,
// -var-file, MCPFORM_VAR_<name> and defaults.
func (l *loader) rootVariables(m *module) (map[string]cty.Value, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	type given struct {
		raw  hcl.Expression // for files and parsed -var values
		str  *string        // a literal string
		from valueSource
	}
	provided := map[string]given{}

	// Lowest first: environment, then files in order, then -var.
	if l.opts.Getenv != nil {
		for _, v := range m.variables {
			name := envVarPrefix + v.name
			if s := l.opts.Getenv(name); s != "" {
				s := s
				provided[v.name] = given{str: &s, from: valueSource{what: "the environment variable " + name}}
			}
		}
	}
	for _, f := range l.opts.VarFiles {
		attrs, d := l.readVarFile(f)
		diags = append(diags, d...)
		for _, a := range sortedAttrs(attrs) {
			v, ok := m.varsByName[a.Name]
			if !ok {
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagWarning,
					Summary:  "Value for undeclared variable",
					Detail:   fmt.Sprintf("The configuration does not declare a variable named %q, so this value is ignored.%s To use it, declare variable %q {} in the configuration.", a.Name, didYouMean(a.Name, varNames(m)), a.Name),
					Subject:  a.NameRange.Ptr(),
				})
				continue
			}
			rng := a.Expr.Range()
			if v.sensitive {
				// Do not point a snippet at a secret.
				provided[a.Name] = given{raw: a.Expr, from: valueSource{what: "the variable file " + f}}
				continue
			}
			provided[a.Name] = given{raw: a.Expr, from: valueSource{what: "the variable file " + f, rng: &rng}}
		}
	}
	names := make([]string, 0, len(l.opts.Vars))
	for k := range l.opts.Vars {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		s := l.opts.Vars[k]
		if _, ok := m.varsByName[k]; !ok {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Value for undeclared variable",
				Detail:   fmt.Sprintf("A variable named %q was assigned with -var, but the configuration does not declare it.%s Declare it with variable %q {}, or remove the -var argument.", k, didYouMean(k, varNames(m)), k),
			})
			continue
		}
		provided[k] = given{str: &s, from: valueSource{what: "-var '" + k + "=…'"}}
	}

	vals := map[string]cty.Value{}
	for _, v := range m.variables {
		g, ok := provided[v.name]
		var val cty.Value
		from := valueSource{what: "its default", rng: &v.defRange}
		switch {
		case !ok:
			if v.def == cty.NilVal && l.opts.Validate {
				// validate checks the configuration for every value:
				// what depends on this one is checked once it is known.
				vals[v.name] = cty.UnknownVal(v.typ)
				continue
			}
			if v.def == cty.NilVal {
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "No value for required variable",
					Detail:   fmt.Sprintf("The root variable %q has no default, so it must be set: with -var '%s=…', in a -var-file, or with the environment variable %s%s.", v.name, v.name, envVarPrefix, v.name),
					Subject:  v.declRange.Ptr(),
				})
				vals[v.name] = cty.UnknownVal(v.typ)
				continue
			}
			val = v.def
		case g.str != nil:
			val, diags = l.parseVarString(v, *g.str, g.from, diags)
			from = g.from
		default:
			var d hcl.Diagnostics
			val, d = g.raw.Value(nil)
			if v.sensitive {
				d = hideSubjects(d)
			}
			diags = append(diags, d...)
			from = g.from
		}
		val, d := l.finishVariable(v, val, from)
		diags = append(diags, d...)
		vals[v.name] = val
	}
	return vals, diags
}

// parseVarString interprets a -var or environment value: literally for a
// string (or untyped) variable, as an HCL expression otherwise.
func (l *loader) parseVarString(v *variable, s string, from valueSource, diags hcl.Diagnostics) (cty.Value, hcl.Diagnostics) {
	if v.typ.Equals(cty.String) || v.typ.Equals(cty.DynamicPseudoType) {
		return cty.StringVal(s), diags
	}
	expr, d := parseExpression([]byte(s), "<value for var."+v.name+">")
	if !d.HasErrors() {
		var val cty.Value
		val, d = expr.Value(nil)
		if !d.HasErrors() {
			return val, diags
		}
	}
	detail := fmt.Sprintf("The value given by %s is not a valid expression for a variable of type %s. Write it in HCL syntax, for example [\"a\", \"b\"] for a list.", from.what, typeexpr.TypeString(v.typ))
	if !v.sensitive && len(d) > 0 {
		detail += " " + d[0].Summary + ": " + d[0].Detail
	}
	return cty.DynamicVal, append(diags, &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Invalid value for input variable",
		Detail:   detail,
		Subject:  v.declRange.Ptr(),
	})
}

// finishVariable applies type defaults, converts to the declared type,
// marks sensitive values and runs validations.
func (l *loader) finishVariable(v *variable, val cty.Value, from valueSource) (cty.Value, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	if !val.IsKnown() {
		return cty.UnknownVal(v.typ), nil
	}
	subject := v.declRange.Ptr()
	if from.rng != nil {
		subject = from.rng
	}
	if val.IsNull() && !v.nullable {
		if v.def == cty.NilVal || v.def.IsNull() {
			return cty.UnknownVal(v.typ), hcl.Diagnostics{{
				Severity: hcl.DiagError,
				Summary:  "Invalid value for input variable",
				Detail:   fmt.Sprintf("var.%s is declared with nullable = false, but %s sets it to null. Give it a value.", v.name, from.what),
				Subject:  subject,
			}}
		}
		val = v.def
	}
	if v.defaults != nil {
		val = v.defaults.Apply(val)
	}
	conv, err := convert.Convert(val, v.typ)
	if err != nil {
		return cty.UnknownVal(v.typ), hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Invalid value for input variable",
			Detail:   fmt.Sprintf("The value for var.%s from %s is not suitable for its type constraint (declared at %s): %s.", v.name, from.what, rangeString(v.declRange), convertErrorString(err)),
			Subject:  subject,
		}}
	}
	val = conv
	if v.sensitive {
		val = val.Mark(sensitive)
	}
	for _, rule := range v.validations {
		ctx := &hcl.EvalContext{Variables: map[string]cty.Value{"var": cty.ObjectVal(map[string]cty.Value{v.name: val})}, Functions: functions}
		res, d := rule.condition.Value(ctx)
		d = redactSensitive(rule.condition, ctx, d)
		if d.HasErrors() {
			diags = append(diags, d...)
			continue
		}
		res, _ = res.Unmark()
		if res.IsNull() || !res.Type().Equals(cty.Bool) || !res.IsKnown() {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid variable validation result",
				Detail:   "The condition must give true or false.",
				Subject:  rule.condition.Range().Ptr(),
			})
			continue
		}
		if res.True() {
			continue
		}
		msg := "(error_message could not be evaluated)"
		if mv, md := rule.message.Value(ctx); !md.HasErrors() {
			if mv.ContainsMarked() {
				msg = "The error message refers to a sensitive value, so it is not shown."
			} else if s, err := convert.Convert(mv, cty.String); err == nil && !s.IsNull() {
				msg = s.AsString()
			}
		}
		d2 := &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid value for variable",
			Detail:   fmt.Sprintf("%s\n\nThe value of var.%s comes from %s; this was checked by the validation rule at %s.", msg, v.name, from.what, rangeString(rule.rng)),
			Subject:  rule.condition.Range().Ptr(),
		}
		if from.rng != nil {
			// Point at the value to change, not at the rule.
			d2.Subject = from.rng
		}
		if !v.sensitive {
			d2.Expression, d2.EvalContext = rule.condition, ctx
		}
		diags = append(diags, d2)
	}
	return val, diags
}

// readVarFile parses a -var-file: JSON for *.json, HCL attributes otherwise.
func (l *loader) readVarFile(name string) (hcl.Attributes, hcl.Diagnostics) {
	src, err := l.fs.ReadFile(name)
	if err != nil {
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Cannot read variable file",
			Detail:   fmt.Sprintf("Reading -var-file %s: %v.", name, unwrapPathError(err)),
		}}
	}
	l.files[name] = src
	var file *hcl.File
	var diags hcl.Diagnostics
	if strings.EqualFold(filepath.Ext(name), ".json") {
		file, diags = parseJSON(src, name)
	} else {
		file, diags = parseConfig(src, name)
	}
	if diags.HasErrors() {
		return nil, diags
	}
	attrs, d := file.Body.JustAttributes()
	return attrs, append(diags, d...)
}

func (l *loader) checkRequiredVersion(a *hcl.Attribute) hcl.Diagnostics {
	s, ok, diags := literalString(a, "required_version")
	if !ok {
		return diags
	}
	c, err := semver.NewConstraint(s)
	if err != nil {
		return hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Invalid version constraint",
			Detail:   fmt.Sprintf("required_version %q is not a version constraint: %v. Write one like \">= 0.1.0\" or \"~> 0.2\".", s, err),
			Subject:  a.Expr.Range().Ptr(),
		}}
	}
	if l.opts.Version == "" {
		return nil
	}
	v, err := semver.NewVersion(l.opts.Version)
	if err != nil {
		return nil // a development build: nothing to compare
	}
	if ok, _ := c.Validate(v); !ok {
		return hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Unsupported mcpform version",
			Detail:   fmt.Sprintf("This configuration requires mcpform %s, and this is mcpform %s. Use an mcpform that meets the constraint, or change required_version.", s, l.opts.Version),
			Subject:  a.Expr.Range().Ptr(),
		}}
	}
	return nil
}

func varNames(m *module) []string {
	out := make([]string, 0, len(m.variables))
	for _, v := range m.variables {
		out = append(out, v.name)
	}
	return out
}

// convertErrorString renders a cty conversion error without values.
func convertErrorString(err error) string {
	if pe, ok := err.(cty.PathError); ok && len(pe.Path) > 0 {
		return fmt.Sprintf("%s: %s", pathString(pe.Path), pe.Error())
	}
	return err.Error()
}

func pathString(p cty.Path) string {
	var b strings.Builder
	for _, step := range p {
		switch s := step.(type) {
		case cty.GetAttrStep:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.Name)
		case cty.IndexStep:
			switch {
			case s.Key.Type().Equals(cty.String):
				fmt.Fprintf(&b, "[%q]", s.Key.AsString())
			case s.Key.Type().Equals(cty.Number):
				fmt.Fprintf(&b, "[%s]", s.Key.AsBigFloat().Text('f', -1))
			default:
				b.WriteString("[…]")
			}
		}
	}
	if b.Len() == 0 {
		return "value"
	}
	return "attribute " + b.String()
}

// hideSubjects drops source ranges (and so snippets) from diagnostics about
// a sensitive value.
func hideSubjects(diags hcl.Diagnostics) hcl.Diagnostics {
	for _, d := range diags {
		d.Subject, d.Context, d.Expression, d.EvalContext = nil, nil, nil, nil
	}
	return diags
}
