package plan

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"

	"github.com/mcpform/mcpform/lock"
)

// DiffSurface lists how a live surface differs from its locked entry, one
// Change per finding, each graded by its rule (rules.go). It uses
// lock.Compare to find the fields and items whose digests differ, then
// drills into each changed item down to JSON Schema keywords. Unchanged
// counts, per list field ("tools", …), the locked items that did not change.
//
// Both entries must be sealed. DiffSurface is pure: it neither prints nor
// keeps anything.
func DiffSurface(serverAddr string, locked, live *lock.Entry) (changes []Change, unchanged map[string]int) {
	d := &differ{}
	touched := map[lock.Kind]int{}
	drift := lock.Compare(locked, live)
	renamed := renames(drift, locked, live)
	renamedFrom := map[lock.Kind]map[string]bool{}
	for k, m := range renamed {
		renamedFrom[k] = map[string]bool{}
		for _, old := range m {
			renamedFrom[k][old] = true
		}
	}
	for _, dr := range drift {
		switch dr.Field {
		case "era":
			d.add("MCP-ERA-CHANGED", serverAddr+".era", Update, jsonString(eraName(locked)), jsonString(eraName(live)), "")
		case "instructions":
			d.instructions(serverAddr+".instructions", locked.Instructions, live.Instructions)
		case "serverInfo":
			d.add("MCP-SERVERINFO-CHANGED", serverAddr+".serverInfo", Update, locked.ServerInfo, live.ServerInfo, "")
		case "capabilities":
			d.add("MCP-CAPABILITIES-CHANGED", serverAddr+".capabilities", Update, locked.Capabilities, live.Capabilities, "")
		case "protocolVersion":
			d.add("MCP-PROTOCOL-VERSION-CHANGED", serverAddr+".protocolVersion", Update,
				jsonString(locked.ProtocolVersion), jsonString(live.ProtocolVersion), "")
		case "supportedVersions":
			d.add("MCP-SUPPORTED-VERSIONS-CHANGED", serverAddr+".supportedVersions", Update,
				encode(locked.SupportedVersions), encode(live.SupportedVersions), "")
		default:
			if !dr.IsItem() {
				// A field lock.Compare learnt after this code was written:
				// never drop drift silently.
				d.add("MCP-ITEM-FIELD-CHANGED", serverAddr+"."+dr.Field, Action(dr.Action), nil, nil, "")
				continue
			}
			addr := serverAddr + "." + kindAddr[dr.Kind] + "." + dr.Key
			d.itemAddr = addr
			switch {
			case dr.Action == '+' && renamed[dr.Kind][dr.Key] != "":
				old := renamed[dr.Kind][dr.Key]
				d.add("MCP-"+kindRule[dr.Kind]+"-RENAMED", addr, Update, jsonString(old), jsonString(dr.Key),
					"the locked "+kindNoun[dr.Kind]+" under a new "+dr.Kind.KeyField()+", the rest of it unchanged: callers of the old one fail")
			case dr.Action == '+':
				it, _ := live.Find(dr.Kind, dr.Key)
				d.add("MCP-"+kindRule[dr.Kind]+"-ADDED", addr, Create, nil, it.JSON, "")
			case dr.Action == '-' && renamedFrom[dr.Kind][dr.Key]:
				// Shown as the rename, at its new key.
				touched[dr.Kind]++
			case dr.Action == '-':
				touched[dr.Kind]++
				it, _ := locked.Find(dr.Kind, dr.Key)
				d.add("MCP-"+kindRule[dr.Kind]+"-REMOVED", addr, Delete, it.JSON, nil, "")
			default:
				touched[dr.Kind]++
				a, _ := locked.Find(dr.Kind, dr.Key)
				b, _ := live.Find(dr.Kind, dr.Key)
				n := len(d.out)
				d.item(dr.Kind, addr, decode(a.JSON), decode(b.JSON))
				if len(d.out) == n {
					// The digests differ but no field compares different
					// (numbers beyond float64, say). Report the item
					// rather than let a drift pass unseen.
					d.add("MCP-ITEM-FIELD-CHANGED", addr, Update, a.JSON, b.JSON, "the item changed in a way mcpform cannot place")
				}
			}
			d.itemAddr = ""
		}
	}
	if a, b := authorizationOf(locked), authorizationOf(live); a != nil && b != nil && string(a) != string(b) {
		d.add("MCP-AUTHORIZATION-CHANGED", serverAddr+".authorization", Update, a, b,
			"the server's tokens would come from, and go to, another authorization server")
	}
	for _, k := range lock.Kinds {
		if n := len(locked.List(k)) - touched[k]; n > 0 {
			if unchanged == nil {
				unchanged = map[string]int{}
			}
			unchanged[k.Field()] = n
		}
	}
	return d.out, unchanged
}

// kindAddr is the address segment of each kind; kindRule its rule segment.
var (
	kindAddr = [...]string{lock.Tools: "tool", lock.Prompts: "prompt", lock.Resources: "resource", lock.ResourceTemplates: "resource_template"}
	kindRule = [...]string{lock.Tools: "TOOL", lock.Prompts: "PROMPT", lock.Resources: "RESOURCE", lock.ResourceTemplates: "RESOURCE-TEMPLATE"}
	kindNoun = [...]string{lock.Tools: "tool", lock.Prompts: "prompt", lock.Resources: "resource", lock.ResourceTemplates: "resource template"}
)

// authorizationOf is what an OAuth server advertised of its
// authorization (lock.RemoteAuth.Authorization), or nil for a server
// without OAuth: a server locked with a static token names none.
func authorizationOf(e *lock.Entry) json.RawMessage {
	if e.Remote == nil || e.Remote.Auth == nil || !e.Remote.Auth.OAuth {
		return nil
	}
	return encode(e.Remote.Auth.Authorization())
}

func eraName(e *lock.Entry) string {
	if e.Modern() {
		return lock.ModernVersion
	}
	return "legacy"
}

// differ collects changes; its methods walk decoded JSON.
type differ struct {
	out      []Change
	itemAddr string // the address of the item being diffed, "" at server level
}

// add appends a change graded by its rule. An unknown rule is a bug in this
// package, caught by TestEveryRuleIsCatalogued; it still yields a major
// change rather than a silent one.
func (d *differ) add(rule, addr string, act Action, before, after json.RawMessage, detail string) {
	r, ok := LookupRule(rule)
	if !ok {
		r = Rule{ID: rule, Grade: Major, Class: Definitional}
	}
	d.out = append(d.out, Change{Addr: addr, Action: act, Class: r.Class, Grade: r.Grade, Rule: r.ID,
		Security: r.Security, Before: before, After: after, Detail: detail, Item: d.itemAddr})
}

// addValues is add for decoded values, nil meaning absent.
func (d *differ) addValues(rule, addr string, a, b any, detail string) {
	d.add(rule, addr, actionOf(a, b), encodeOpt(a), encodeOpt(b), detail)
}

func actionOf(a, b any) Action {
	switch {
	case a == nil:
		return Create
	case b == nil:
		return Delete
	}
	return Update
}

func (d *differ) instructions(addr string, a, b *string) {
	var av, bv any
	if a != nil {
		av = *a
	}
	if b != nil {
		bv = *b
	}
	d.text("MCP-INSTRUCTIONS-CHANGED", addr, av, bv)
}

// text grades a changed description-like string: whitespace-only edits are
// a patch, and so are edits of ASCII case and punctuation only
// (cosmeticOnly); anything else is the given (security-relevant) rule,
// which plan's judges, when mcp.hcl has any, may regrade (judged.go).
func (d *differ) text(rule, addr string, a, b any) {
	as, aok := a.(string)
	bs, bok := b.(string)
	if aok && bok && whitespaceOnly(as, bs) {
		d.addValues("MCP-TEXT-WHITESPACE-CHANGED", addr, a, b, "")
		return
	}
	if aok && bok && cosmeticOnly(as, bs) {
		d.addValues("MCP-TEXT-COSMETIC-CHANGED", addr, a, b, "")
		return
	}
	d.addValues(rule, addr, a, b, "")
}

// whitespaceOnly reports whether a and b differ only in runs of ASCII
// whitespace. Unicode spaces (U+00A0, U+2028, …) and zero-width characters
// deliberately count as text: they are how hidden instructions hide.
func whitespaceOnly(a, b string) bool {
	return strings.Join(asciiFields(a), " ") == strings.Join(asciiFields(b), " ")
}

func asciiFields(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '\v'
	})
}

// item drills into one changed item, field by field in name order.
func (d *differ) item(k lock.Kind, addr string, av, bv any) {
	a, aok := av.(map[string]any)
	b, bok := bv.(map[string]any)
	if !aok || !bok {
		d.addValues("MCP-ITEM-FIELD-CHANGED", addr, av, bv, "")
		return
	}
	for _, f := range unionKeys(a, b) {
		x, y := a[f], b[f]
		if f == k.KeyField() || equalJSON(x, y) {
			continue
		}
		faddr := addr + "." + f
		switch {
		case f == "description":
			d.text("MCP-"+kindRule[k]+"-DESCRIPTION-CHANGED", faddr, x, y)
		case f == "title":
			d.addValues("MCP-ITEM-TITLE-CHANGED", faddr, x, y, "")
		case f == "icons":
			d.addValues("MCP-ITEM-ICONS-CHANGED", faddr, x, y, "")
		case f == "_meta":
			d.addValues("MCP-ITEM-META-CHANGED", faddr, x, y, "")
		case k == lock.Tools && f == "inputSchema":
			d.schema(inputSide, faddr, x, y)
		case k == lock.Tools && f == "outputSchema":
			switch {
			case x == nil:
				d.addValues("MCP-OUTPUT-SCHEMA-ADDED", faddr, x, y, "")
			case y == nil:
				d.addValues("MCP-OUTPUT-SCHEMA-REMOVED", faddr, x, y, "")
			default:
				d.schema(outputSide, faddr, x, y)
			}
		case k == lock.Tools && f == "annotations":
			d.annotations(faddr, x, y)
		case k == lock.Prompts && f == "arguments":
			d.arguments(faddr, x, y)
		case (k == lock.Resources || k == lock.ResourceTemplates) && f == "mimeType":
			d.addValues("MCP-"+kindRule[k]+"-MIMETYPE-CHANGED", faddr, x, y, "")
		case (k == lock.Resources || k == lock.ResourceTemplates) && f == "name":
			d.text("MCP-"+kindRule[k]+"-NAME-CHANGED", faddr, x, y)
		case (k == lock.Resources || k == lock.ResourceTemplates) && f == "annotations":
			d.addValues("MCP-ITEM-ANNOTATIONS-CHANGED", faddr, x, y, "")
		case k == lock.Resources && f == "size":
			d.addValues("MCP-RESOURCE-SIZE-CHANGED", faddr, x, y, "")
		default:
			d.addValues("MCP-ITEM-FIELD-CHANGED", faddr, x, y, "")
		}
	}
}

// hintDefaults are the MCP defaults of the tool annotation hints; a missing
// (or non-boolean) hint compares as its default, so destructiveHint missing
// -> true is a spelling change, and false -> missing raises the risk.
// riskyWhen is the value that states the higher risk.
var hintDefaults = map[string]struct{ def, riskyWhen bool }{
	"readOnlyHint":    {false, false},
	"destructiveHint": {true, true},
	"openWorldHint":   {true, true},
}

func (d *differ) annotations(addr string, av, bv any) {
	a, _ := av.(map[string]any)
	b, _ := bv.(map[string]any)
	for _, f := range unionKeys(a, b) {
		x, y := a[f], b[f]
		if equalJSON(x, y) {
			continue
		}
		faddr := addr + "." + f
		if f == "title" {
			d.addValues("MCP-ITEM-TITLE-CHANGED", faddr, x, y, "")
			continue
		}
		h, ok := hintDefaults[f]
		if !ok {
			d.addValues("MCP-TOOL-ANNOTATION-CHANGED", faddr, x, y, "")
			continue
		}
		ex, ey := boolOr(x, h.def), boolOr(y, h.def)
		switch {
		case ex == ey:
			d.addValues("MCP-TOOL-ANNOTATION-CHANGED", faddr, x, y, "same effective value: a missing "+f+" means "+boolWord(h.def))
		case ey == h.riskyWhen:
			d.addValues("MCP-TOOL-ANNOTATION-RISK-RAISED", faddr, x, y, effectiveDetail(f, x, y, ex, ey))
		default:
			d.addValues("MCP-TOOL-ANNOTATION-RISK-LOWERED", faddr, x, y, effectiveDetail(f, x, y, ex, ey))
		}
	}
}

func effectiveDetail(f string, x, y any, ex, ey bool) string {
	if x != nil && y != nil {
		return ""
	}
	return f + " effectively " + boolWord(ex) + " -> " + boolWord(ey) + " (a missing hint takes the MCP default)"
}

func boolOr(v any, def bool) bool {
	if b, ok := v.(bool); ok {
		return b
	}
	return def
}

func boolWord(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// arguments diffs a prompt's argument lists, matched by name.
func (d *differ) arguments(addr string, av, bv any) {
	a, aok := argsByName(av)
	b, bok := argsByName(bv)
	if !aok || !bok {
		d.addValues("MCP-ITEM-FIELD-CHANGED", addr, av, bv, "arguments are not a list of objects with distinct names")
		return
	}
	for _, n := range unionKeys(a, b) {
		x, xok := a[n].(map[string]any)
		y, yok := b[n].(map[string]any)
		aaddr := addr + "." + n
		switch {
		case !xok:
			if y["required"] == true {
				d.addValues("MCP-PROMPT-ARGUMENT-ADDED-REQUIRED", aaddr, nil, y, "")
			} else {
				d.addValues("MCP-PROMPT-ARGUMENT-ADDED", aaddr, nil, y, "")
			}
			continue
		case !yok:
			d.addValues("MCP-PROMPT-ARGUMENT-REMOVED", aaddr, x, nil, "")
			continue
		}
		for _, f := range unionKeys(x, y) {
			p, q := x[f], y[f]
			if f == "name" || equalJSON(p, q) {
				continue
			}
			faddr := aaddr + "." + f
			switch f {
			case "required":
				if q == true {
					d.addValues("MCP-PROMPT-ARGUMENT-REQUIRED", faddr, p, q, "")
				} else if p == true {
					d.addValues("MCP-PROMPT-ARGUMENT-OPTIONAL", faddr, p, q, "")
				} else {
					d.addValues("MCP-ITEM-EQUIVALENT-CHANGED", faddr, p, q, "")
				}
			case "description":
				d.text("MCP-PROMPT-ARGUMENT-DESCRIPTION-CHANGED", faddr, p, q)
			case "title":
				d.addValues("MCP-ITEM-TITLE-CHANGED", faddr, p, q, "")
			default:
				d.addValues("MCP-ITEM-FIELD-CHANGED", faddr, p, q, "")
			}
		}
	}
}

// argsByName indexes a prompt's arguments; ok is false for a malformed list.
// A missing list is an empty one.
func argsByName(v any) (map[string]any, bool) {
	return indexList(v, true, func(e any) (string, any, bool) {
		m, ok := e.(map[string]any)
		if !ok {
			return "", nil, false
		}
		n, ok := m["name"].(string)
		return n, m, ok
	})
}

// unionKeys returns the keys of a and b, sorted, so findings come out in a
// stable order.
func unionKeys(a, b map[string]any) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// decode parses a lock item (already strict JSON) keeping numbers as
// written.
func decode(raw []byte) any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	return v
}

// encode writes a decoded value back as JSON (keys sorted, numbers as
// written, no HTML escaping).
func encode(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return nil
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// encodeOpt is encode with nil (absent) kept as nil.
func encodeOpt(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	return encode(v)
}

func jsonString(s string) json.RawMessage { return encode(s) }

// equalJSON compares decoded values as RFC 8785 does: object key order does
// not matter and numbers compare by value (1.50 == 1.5).
func equalJSON(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !equalJSON(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		if x == y {
			return true
		}
		fx, err1 := x.Float64()
		fy, err2 := y.Float64()
		return err1 == nil && err2 == nil && fx == fy
	}
	return a == b
}

// requiredBump is the highest grade among the definitional changes: config
// and informational changes never demand a version bump. Pass one item's
// changes (Change.Item) for a per-tool gate.
func requiredBump(changes []Change) Grade {
	g := None
	for _, c := range changes {
		if c.Class == Definitional {
			g = max(g, c.Grade)
		}
	}
	return g
}
