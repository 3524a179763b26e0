package lang

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/mcpform/mcpform/policy"
)

// pathAttrs are the attributes of the path object.
var pathAttrs = []string{"module", "root", "tmp"}

// scope is what the expressions of one module may refer to.
type scope struct {
	m      *module
	vars   map[string]cty.Value
	locals map[string]cty.Value
	ctx    *hcl.EvalContext
	// head reads the start of a server's program, for checkLauncher.
	head func(prog string) []byte
	// lookPath finds a bare program name as run will (Options.LookPath),
	// for checkProgram; nil when the caller gave none.
	lookPath func(prog string) string
}

func (l *loader) newScope(m *module, vars map[string]cty.Value) *scope {
	s := &scope{m: m, vars: vars, locals: map[string]cty.Value{}, head: l.programHead, lookPath: l.opts.LookPath}
	s.ctx = &hcl.EvalContext{
		Variables: map[string]cty.Value{
			"var":   cty.ObjectVal(vars),
			"local": cty.EmptyObjectVal,
			"path": cty.ObjectVal(map[string]cty.Value{
				"root":   cty.StringVal("."),
				"module": cty.StringVal(m.relDir),
				"tmp":    cty.StringVal(policy.TmpVar),
			}),
		},
		Functions: functions,
	}
	return s
}

func (s *scope) setLocal(name string, v cty.Value) {
	s.locals[name] = v
	s.ctx.Variables["local"] = cty.ObjectVal(s.locals)
}

// checkRefs reports references to undeclared variables, locals and path
// attributes with a "Did you mean", which HCL's own message lacks.
func (s *scope) checkRefs(expr hcl.Expression) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, t := range expr.Variables() {
		root := t.RootName()
		if root != "var" && root != "local" && root != "path" {
			continue // HCL reports unknown roots, with a suggestion
		}
		if len(t) < 2 {
			diags = append(diags, errorAt(t.SourceRange(), "Invalid reference",
				fmt.Sprintf("%q cannot be used alone: name one of its attributes, as in %s.NAME.", root, root)))
			continue
		}
		ta, ok := t[1].(hcl.TraverseAttr)
		if !ok {
			diags = append(diags, errorAt(t.SourceRange(), "Invalid reference",
				fmt.Sprintf("Refer to an attribute of %s with a dot, as in %s.NAME.", root, root)))
			continue
		}
		switch root {
		case "var":
			if _, ok := s.m.varsByName[ta.Name]; !ok {
				diags = append(diags, errorAt(t.SourceRange(), "Reference to undeclared input variable",
					fmt.Sprintf("A variable named %q has not been declared in this module.%s Declare it with a variable %q {} block.", ta.Name, didYouMean(ta.Name, varNames(s.m)), ta.Name)))
			}
		case "local":
			found := false
			var names []string
			for _, a := range s.m.locals {
				names = append(names, a.Name)
				found = found || a.Name == ta.Name
			}
			if !found {
				diags = append(diags, errorAt(t.SourceRange(), "Reference to undeclared local value",
					fmt.Sprintf("A local value named %q has not been declared in this module.%s Declare it in a locals block.", ta.Name, didYouMean(ta.Name, names))))
			}
		case "path":
			switch ta.Name {
			case "root", "module", "tmp":
			case "cwd":
				diags = append(diags, errorAt(t.SourceRange(), "Unsupported path attribute",
					"path.cwd is not available: it would make the lock depend on where mcpform runs. Use path.root (the configuration directory, \".\") or path.module."))
			default:
				diags = append(diags, errorAt(t.SourceRange(), "Unsupported path attribute",
					fmt.Sprintf("path has no attribute %q; it has root, module and tmp.%s", ta.Name, didYouMean(ta.Name, pathAttrs))))
			}
		}
	}
	return diags
}

// eval checks references, then evaluates.
func (s *scope) eval(expr hcl.Expression) (cty.Value, hcl.Diagnostics) {
	if diags := s.checkRefs(expr); diags.HasErrors() {
		return cty.DynamicVal, diags
	}
	v, diags := expr.Value(s.ctx)
	return v, redactSensitive(expr, s.ctx, diags)
}

// redactSensitive replaces the details of diagnostics from evaluating an
// expression that uses a sensitive value: HCL and function errors quote
// argument values ("cannot convert "…" to number").
func redactSensitive(expr hcl.Expression, ctx *hcl.EvalContext, diags hcl.Diagnostics) hcl.Diagnostics {
	if len(diags) == 0 {
		return diags
	}
	for _, t := range expr.Variables() {
		v, td := t.TraverseAbs(ctx)
		if !td.HasErrors() && v.ContainsMarked() {
			for _, d := range diags {
				d.Detail = "This expression uses a sensitive value, so the details of the error are not shown. Check the types and arguments of the expression."
				d.Expression, d.EvalContext = nil, nil
			}
			return diags
		}
	}
	return diags
}

// evalModule evaluates a parsed module given its variable values, appending
// its servers (and those of its modules) to l.servers.
func (l *loader) evalModule(m *module, vars map[string]cty.Value) hcl.Diagnostics {
	s := l.newScope(m, vars)
	diags := l.evalLocals(s)
	for _, b := range m.servers {
		srv, d := s.decodeServer(b)
		diags = append(diags, d...)
		if srv != nil {
			l.servers = append(l.servers, srv)
		}
	}
	for _, b := range m.calls {
		diags = append(diags, l.evalCall(s, b)...)
	}
	return diags
}

// evalLocals evaluates the locals of a module in dependency order, whatever
// order they are written in, and reports cycles.
func (l *loader) evalLocals(s *scope) hcl.Diagnostics {
	var diags hcl.Diagnostics
	byName := map[string]*hcl.Attribute{}
	for _, a := range s.m.locals {
		byName[a.Name] = a
	}
	const (
		unvisited = iota
		visiting
		done
	)
	state := map[string]int{}
	var stack []string
	var visit func(name string)
	visit = func(name string) {
		a := byName[name]
		switch state[name] {
		case done:
			return
		case visiting:
			i := len(stack) - 1
			for i > 0 && stack[i] != name {
				i--
			}
			cycle := append(append([]string(nil), stack[i:]...), name)
			for j := range cycle {
				cycle[j] = "local." + cycle[j]
			}
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Cycle in local values",
				Detail:   fmt.Sprintf("These local values refer to each other in a cycle: %s. Break the cycle: a local value cannot depend on itself.", strings.Join(cycle, " → ")),
				Subject:  byName[name].Expr.Range().Ptr(),
			})
			for _, n := range stack[i:] {
				state[n] = done
				s.setLocal(n, cty.DynamicVal)
			}
			return
		}
		state[name] = visiting
		stack = append(stack, name)
		for _, t := range a.Expr.Variables() {
			if t.RootName() != "local" || len(t) < 2 {
				continue
			}
			if ta, ok := t[1].(hcl.TraverseAttr); ok {
				if _, ok := byName[ta.Name]; ok {
					visit(ta.Name)
				}
			}
		}
		stack = stack[:len(stack)-1]
		if state[name] == done {
			return // part of a cycle, already reported
		}
		state[name] = done
		v, d := s.eval(a.Expr)
		diags = append(diags, d...)
		if d.HasErrors() {
			v = cty.DynamicVal
		}
		s.setLocal(name, v)
	}
	names := make([]string, 0, len(byName))
	for _, a := range s.m.locals {
		names = append(names, a.Name)
	}
	for _, n := range names {
		visit(n)
	}
	return diags
}

// sanitize drops the expression and evaluation context of any diagnostic
// whose referenced values include a sensitive one, so renderers that show
// "var.x is …" never show a secret.
func sanitize(diags hcl.Diagnostics) hcl.Diagnostics {
	for _, d := range diags {
		if d.Expression == nil || d.EvalContext == nil {
			continue
		}
		for _, t := range d.Expression.Variables() {
			v, td := t.TraverseAbs(d.EvalContext)
			if td.HasErrors() || v.ContainsMarked() {
				d.Expression, d.EvalContext = nil, nil
				break
			}
		}
	}
	sort.SliceStable(diags, func(i, j int) bool {
		a, b := diags[i].Subject, diags[j].Subject
		if a == nil || b == nil {
			return a == nil && b != nil
		}
		return posLess(*a, *b)
	})
	return diags
}
