package render

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/fatih/color"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/plan"
)

// Options control the human rendering.
type Options struct {
	// Color adds ANSI colour: green +, yellow ~, red -, bold for
	// security-relevant changes. The caller decides (a TTY, no -no-color,
	// no NO_COLOR); tests leave it off.
	Color bool
	// ShowUnchanged lists the unchanged items of each server by name
	// instead of "(N unchanged tools hidden)".
	ShowUnchanged bool
	// Errors, when not nil, receives the closing "Error:" line of each
	// server that could not be probed or failed a gate, instead of the
	// plan's writer: the CLI sends them to stderr, as terraform sends its
	// diagnostics, so that a plan redirected to a file holds the plan.
	Errors io.Writer
	// ErrorsColor colours the lines written to Errors, which is another
	// stream than the plan's: the caller decides for it on its own
	// (stdout may be a terminal and stderr a log file).
	ErrorsColor bool
}

// inlineMax is the longest JSON value shown on one line; longer objects and
// arrays are shown indented and diffed line by line, as terraform shows
// jsonencode values.
const inlineMax = 72

// Human writes the Terraform-style plan. Every string a server sent (names,
// keys, descriptions, JSON values, errors) is escaped, so a zero-width
// character or a bidi override shows as \u200b or \u202e.
func Human(w io.Writer, p *plan.Plan, o Options) error {
	bw := bufio.NewWriter(w)
	h := &human{w: bw, o: o, pal: newPalette(o.Color)}
	h.plan(p)
	return bw.Flush()
}

type human struct {
	w   *bufio.Writer
	o   Options
	pal palette
}

func (h *human) printf(format string, args ...any) { fmt.Fprintf(h.w, format, args...) }

func (h *human) plan(p *plan.Plan) {
	errs := p.Errors()
	if !p.HasChanges() {
		if len(errs) == 0 {
			h.printf("No changes. Your MCP servers match %s.\n", lockName(p))
			h.notes(p)
			return
		}
	} else {
		h.printf("mcpform will perform the following actions:\n")
	}
	for _, s := range p.Servers {
		if s.Action == plan.NoOp && s.Error == "" && s.VersionError == "" {
			continue
		}
		h.printf("\n")
		h.server(s)
	}
	h.notes(p)
	sum := summarize(p)
	counts := fmt.Sprintf("%d to add, %d to change, %d to remove. Definitional: %d, informational: %d, config: %d%s. Required bump: %s.",
		sum.Add, sum.Change, sum.Remove, sum.Definitional, sum.Informational, sum.Config, codeCount(sum), sum.RequiredBump)
	if sum.Failed > 0 {
		// As terraform, a plan with errors does not close as a plan:
		// what it shows of the other servers is not the whole change.
		h.printf("\n%s\n", h.pal.red(fmt.Sprintf("Plan incomplete: %d of %d servers failed; fix the errors above.", sum.Failed, sum.Servers)))
		if sum.Failed < sum.Servers {
			h.printf("Planned so far: %s\n", counts)
		}
	} else {
		h.printf("\n%s\n", h.pal.bold("Plan: "+counts))
	}
	if sum.Security > 0 {
		h.printf("%s\n", h.pal.security(fmt.Sprintf("%d security-relevant change%s: read them with an attacker in mind.", sum.Security, plural(sum.Security))))
	}
	for _, l := range judgeSummary(p) {
		h.printf("%s\n", h.pal.security(l))
	}
	// The errors were shown in full with their servers above; the
	// summary names each in one line.
	errPal := h.pal
	if h.o.Errors != nil {
		errPal = newPalette(h.o.ErrorsColor)
	}
	for _, e := range errs {
		first, _, _ := strings.Cut(e, "\n")
		line := fmt.Sprintf("\n%s %s\n", errPal.red("Error:"), escape.Visible(first))
		if h.o.Errors != nil {
			h.w.Flush()
			io.WriteString(h.o.Errors, line)
			continue
		}
		h.printf("%s", line)
	}
}

func lockName(p *plan.Plan) string {
	if p.LockPath != "" {
		return escape.String(p.LockPath)
	}
	return lock.DefaultPath
}

func (h *human) notes(p *plan.Plan) {
	for _, n := range p.Notes {
		h.printf("\nNote: %s\n", escape.String(n))
	}
}

var verbs = map[plan.Action]string{
	plan.Create: "will be added to the lock",
	plan.Update: "will be updated in the lock",
	plan.Delete: "will be removed from the lock",
}

func (h *human) server(s *plan.ServerPlan) {
	addr := escape.String(s.Addr)
	if s.Error != "" {
		if s.New {
			h.printf("  # %s could not be probed, so it cannot be added to the lock:\n", addr)
		} else {
			h.printf("  # %s could not be probed; its lock entry is kept:\n", addr)
		}
		for _, l := range strings.Split(escape.Visible(s.Error), "\n") {
			h.printf("  #   %s\n", l)
		}
	}
	if s.Action == plan.NoOp {
		h.gate(s)
		return
	}
	if s.Error == "" {
		h.printf("  # %s %s\n", addr, verbs[s.Action])
	}
	glyph := s.Action
	h.printf("  %s server %s {\n", h.pal.glyph(glyph), quote(s.Name))
	groups := group(s)
	for i, g := range groups {
		if g.item == "" {
			h.attributes(6, s.Addr, g.changes)
			continue
		}
		if i > 0 || len(g.changes) > 0 {
			h.printf("\n")
		}
		h.item(g)
	}
	h.unchanged(s, groups)
	h.printf("    }\n")
	h.gate(s)
}

// gate prints the version gate's verdict when it failed, and otherwise
// the semver advice for a server whose surface needs a bump.
func (h *human) gate(s *plan.ServerPlan) {
	if s.VersionError == "" {
		if s.RequiredBump > plan.None && s.SuggestedVersion != "" {
			h.printf("  # version: locked %s, declared %s, required bump %s: suggested %s\n",
				orNone(s.LockedVersion), orNone(s.Version), s.RequiredBump, escape.String(s.SuggestedVersion))
		}
		return
	}
	h.printf("  # version gate: locked %s, declared %s, required bump %s:\n",
		orNone(s.LockedVersion), orNone(s.Version), s.RequiredBump)
	h.printf("  #   %s\n", h.pal.red(escape.Visible(s.VersionError)))
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return escape.String(s)
}

// itemGroup is the changes of one item, or the server-level changes.
type itemGroup struct {
	item    string // address, "" for the server level
	kind    string // "tool", "prompt", "resource", "resource_template"
	key     string
	changes []plan.Change
}

// group splits a server's changes into its server-level changes (first)
// and one group per item, in the order the changes came.
func group(s *plan.ServerPlan) []itemGroup {
	top := itemGroup{}
	var items []itemGroup
	index := map[string]int{}
	for _, c := range s.Changes {
		if c.Item == "" {
			top.changes = append(top.changes, c)
			continue
		}
		i, ok := index[c.Item]
		if !ok {
			kind, key, _ := strings.Cut(strings.TrimPrefix(c.Item, s.Addr+"."), ".")
			i = len(items)
			index[c.Item] = i
			items = append(items, itemGroup{item: c.Item, kind: kind, key: key})
		}
		items[i].changes = append(items[i].changes, c)
	}
	if len(top.changes) > 0 {
		return append([]itemGroup{top}, items...)
	}
	return items
}

func (h *human) item(g itemGroup) {
	glyph := plan.Update
	var whole *plan.Change
	for i, c := range g.changes {
		if c.Addr == g.item {
			glyph, whole = c.Action, &g.changes[i]
		}
	}
	kw := strings.ReplaceAll(g.kind, "_", " ")
	if whole != nil {
		h.rule(6, *whole)
		if whole.Action != plan.Update {
			h.printf("      %s %s %s {\n", h.pal.glyph(glyph), kw, quote(g.key))
			v := whole.After
			if whole.Action == plan.Delete {
				v = whole.Before
			}
			h.wholeItem(10, glyph, v)
			h.printf("        }\n")
			return
		}
	}
	h.printf("      %s %s %s {\n", h.pal.glyph(glyph), kw, quote(g.key))
	if whole != nil && strings.HasSuffix(whole.Rule, "-RENAMED") {
		// The old key -> the new one, as an attribute of the item.
		key := renamedKey[g.kind]
		h.change(10, *whole, key, len(key))
	}
	h.attributes(10, g.item, g.changes)
	h.printf("        }\n")
}

// renamedKey is the key field a rename of each item kind changed.
var renamedKey = map[string]string{"tool": "name", "prompt": "name", "resource": "uri", "resource_template": "uriTemplate"}

// wholeItem lists the fields of an added or removed item.
func (h *human) wholeItem(indent int, glyph plan.Action, raw json.RawMessage) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		h.value(indent, glyph, "value", 5, raw)
		return
	}
	keys := make([]string, 0, len(m))
	width := 0
	for k := range m {
		keys = append(keys, k)
		width = max(width, len(escape.String(k)))
	}
	sort.Strings(keys)
	for _, k := range keys {
		h.value(indent, glyph, escape.String(k), width, m[k])
	}
}

// attributes prints changes at the attribute level, each under its rule.
// The attribute is the change's address below its item (or server).
func (h *human) attributes(indent int, base string, cs []plan.Change) {
	width := 0
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = attrName(base, c.Addr)
		width = max(width, len(names[i]))
	}
	for i, c := range cs {
		if c.Item != "" && c.Addr == c.Item {
			continue // the item's own update, shown by the fallback rule comment
		}
		h.rule(indent, c)
		h.change(indent, c, names[i], width)
	}
}

// attrName is the change's address below base (its item, or its server);
// a change of the server as a whole (a config change) is "server".
func attrName(base, addr string) string {
	if addr == base {
		return "server"
	}
	return escape.String(strings.TrimPrefix(addr, base+"."))
}

func (h *human) rule(indent int, c plan.Change) {
	sec := ""
	if c.Security {
		sec = ", security-relevant"
	}
	line := fmt.Sprintf("# rule: %s (%s, %s%s)", c.Rule, c.Grade, c.Class, sec)
	if c.Security {
		line = h.pal.security(line)
	}
	h.printf("%s%s\n", pad(indent), line)
	if c.Detail != "" {
		h.printf("%s# %s\n", pad(indent), escape.String(c.Detail))
	}
	h.judgement(indent, c)
}

// change prints one attribute: "~ name = old -> new", "+ name = new",
// "- name = old", or a line diff when either side spans lines.
func (h *human) change(indent int, c plan.Change, name string, width int) {
	switch {
	case c.Before == nil:
		h.value(indent, plan.Create, name, width, c.After)
		return
	case c.After == nil:
		h.value(indent, plan.Delete, name, width, c.Before)
		return
	}
	before, bml := show(c.Before)
	after, aml := show(c.After)
	if !bml && !aml {
		h.printf("%s%s %-*s = %s -> %s\n", pad(indent), h.pal.glyph(plan.Update), width, name, before, after)
		return
	}
	open, closeTag := "<<-JSON", "JSON"
	if isString(c.Before) && isString(c.After) {
		open, closeTag = "<<-EOT", "EOT"
	}
	h.printf("%s%s %-*s = %s\n", pad(indent), h.pal.glyph(plan.Update), width, name, open)
	for _, l := range lineDiff(strings.Split(before, "\n"), strings.Split(after, "\n")) {
		h.printf("%s%s %s\n", pad(indent+4), h.pal.glyph(l.op), l.text)
	}
	h.printf("%s%s\n", pad(indent+2), closeTag)
}

// value prints one side of an attribute that exists on one side only.
func (h *human) value(indent int, glyph plan.Action, name string, width int, raw json.RawMessage) {
	text, multi := show(raw)
	if !multi {
		h.printf("%s%s %-*s = %s\n", pad(indent), h.pal.glyph(glyph), width, name, text)
		return
	}
	open, closeTag := "<<-JSON", "JSON"
	if isString(raw) {
		open, closeTag = "<<-EOT", "EOT"
	}
	h.printf("%s%s %-*s = %s\n", pad(indent), h.pal.glyph(glyph), width, name, open)
	for _, l := range strings.Split(text, "\n") {
		h.printf("%s%s %s\n", pad(indent+4), h.pal.glyph(glyph), l)
	}
	h.printf("%s%s\n", pad(indent+2), closeTag)
}

func (h *human) unchanged(s *plan.ServerPlan, groups []itemGroup) {
	if h.o.ShowUnchanged && s.Entry != nil {
		touched := map[string]bool{}
		for _, g := range groups {
			touched[g.item] = true
		}
		for _, k := range lock.Kinds {
			for _, it := range s.Entry.List(k) {
				addr := s.Addr + "." + kindSegment(k) + "." + it.Key
				if !touched[addr] {
					h.printf("        %s %s (unchanged)\n", kindWord(k), quote(it.Key))
				}
			}
		}
		return
	}
	for _, k := range lock.Kinds {
		if n := s.Unchanged[k.Field()]; n > 0 {
			noun := kindWord(k)
			if n != 1 {
				noun += "s"
			}
			h.printf("\n        # (%d unchanged %s hidden)\n", n, noun)
		}
	}
}

func kindSegment(k lock.Kind) string {
	return strings.ReplaceAll(kindWord(k), " ", "_")
}

func kindWord(k lock.Kind) string { return k.String() }

// show renders a JSON value for the plan: a string quoted and escaped (as
// lines when it has line breaks), a short value on one line, a long object
// or array indented. multi says whether the text spans lines.
func show(raw json.RawMessage) (text string, multi bool) {
	if isString(raw) {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			if strings.Contains(s, "\n") {
				lines := strings.Split(s, "\n")
				for i, l := range lines {
					lines[i] = escape.String(l)
				}
				return strings.Join(lines, "\n"), true
			}
			return quote(s), false
		}
	}
	v, ok := decodeJSON(raw)
	if !ok {
		return escape.String(string(raw)), false
	}
	var b strings.Builder
	writeJSON(&b, v, "", false)
	if b.Len() <= inlineMax {
		return b.String(), false
	}
	b.Reset()
	writeJSON(&b, v, "", true)
	return b.String(), true
}

func isString(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '"'
}

func decodeJSON(raw json.RawMessage) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil, false
	}
	return v, true
}

// writeJSON writes v as JSON with every string escaped for display (keys in
// sorted order); indented when pretty.
func writeJSON(b *strings.Builder, v any, indent string, pretty bool) {
	nl := func(ind string) {
		if pretty {
			b.WriteString("\n" + ind)
		}
	}
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			b.WriteString("{}")
			return
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString("{")
		for i, k := range keys {
			if i > 0 {
				b.WriteString(",")
			}
			nl(indent + "  ")
			b.WriteString(quote(k))
			b.WriteString(":")
			if pretty {
				b.WriteString(" ")
			}
			writeJSON(b, x[k], indent+"  ", pretty)
		}
		nl(indent)
		b.WriteString("}")
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[")
		for i, e := range x {
			if i > 0 {
				b.WriteString(",")
			}
			nl(indent + "  ")
			writeJSON(b, e, indent+"  ", pretty)
		}
		nl(indent)
		b.WriteString("]")
	case string:
		b.WriteString(quote(x))
	case json.Number:
		b.WriteString(escape.String(x.String()))
	case bool:
		fmt.Fprint(b, x)
	case nil:
		b.WriteString("null")
	}
}

// quote escapes s for display and quotes it. escape.String doubles every
// backslash, so the \" added here cannot be confused with one the server
// sent.
func quote(s string) string {
	return `"` + strings.ReplaceAll(escape.String(s), `"`, `\"`) + `"`
}

func pad(n int) string { return strings.Repeat(" ", n) }

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// palette colours text when enabled. fatih/color's package-level NoColor is
// left alone: each Color is told explicitly whether to colour.
type palette struct {
	g, y, r, b *color.Color
}

func newPalette(on bool) palette {
	p := palette{g: color.New(color.FgGreen), y: color.New(color.FgYellow), r: color.New(color.FgRed), b: color.New(color.Bold)}
	for _, c := range []*color.Color{p.g, p.y, p.r, p.b} {
		if on {
			c.EnableColor()
		} else {
			c.DisableColor()
		}
	}
	return p
}

func (p palette) glyph(a plan.Action) string {
	switch a {
	case plan.Create:
		return p.g.Sprint("+")
	case plan.Update:
		return p.y.Sprint("~")
	case plan.Delete:
		return p.r.Sprint("-")
	}
	return " "
}

func (p palette) red(s string) string  { return p.r.Sprint(s) }
func (p palette) bold(s string) string { return p.b.Sprint(s) }

// security marks a security-relevant line: bold, so it stands out in a
// long plan.
func (p palette) security(s string) string { return p.b.Sprint(s) }
