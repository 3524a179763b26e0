package plan

import (
	"encoding/json"
	"fmt"
	"sort"
)

// side says which way a schema is read. Input schemas are contravariant: a
// schema that accepts fewer values rejects old calls (major), one that
// accepts more keeps them valid (minor). Output schemas are covariant: a
// narrowed output is major, and a widened one is major too, because the
// result may hold values consumers do not expect. Only added (or newly
// guaranteed) output properties are minor.
type side string

const (
	inputSide  side = "INPUT"
	outputSide side = "OUTPUT"
)

// relation is how the set of values a schema (keyword) accepts moved.
type relation string

const (
	same      relation = ""
	narrowed  relation = "NARROWED"
	widened   relation = "WIDENED"
	different relation = "CHANGED" // neither contains the other, or undecidable
)

// schema diffs two JSON Schemas at addr. nil (absent) and true both mean
// "accept anything"; false accepts nothing.
func (d *differ) schema(s side, addr string, av, bv any) {
	if equalJSON(av, bv) {
		return
	}
	a, aok := schemaObject(av)
	b, bok := schemaObject(bv)
	if !aok || !bok {
		// false on one side, or not a schema at all.
		rel := different
		switch {
		case bv == false && aok:
			rel = narrowed
		case av == false && bok:
			rel = widened
		}
		d.rel(s, "SCHEMA", rel, addr, av, bv, "")
		return
	}
	handled := map[string]bool{}
	for _, k := range unionKeys(a, b) {
		if handled[k] || equalJSON(a[k], b[k]) {
			continue
		}
		x, y := a[k], b[k]
		kaddr := addr + "." + k
		switch k {
		case "type":
			d.rel(s, "TYPE", typeRelation(x, y), kaddr, x, y, "")
		case "enum", "const":
			handled["enum"], handled["const"] = true, true
			d.enum(s, addr, a, b)
		case "properties", "required":
			handled["properties"], handled["required"] = true, true
			d.properties(s, addr, a, b)
		case "additionalProperties":
			d.additional(s, kaddr, x, y)
		case "items":
			_, xs := schemaObject(x)
			_, ys := schemaObject(y)
			if xs && ys || x == false || y == false {
				d.schema(s, kaddr, x, y)
			} else {
				d.rel(s, "SCHEMA", different, kaddr, x, y, "tuple-form items changed")
			}
		case "anyOf":
			d.anyOf(s, kaddr, x, y)
		case "description":
			d.text("MCP-"+string(s)+"-DESCRIPTION-CHANGED", kaddr, x, y)
		case "title", "examples", "$comment", "deprecated", "readOnly", "writeOnly", "$schema", "$id":
			d.addValues("MCP-SCHEMA-ANNOTATION-CHANGED", kaddr, x, y, "")
		case "default":
			if s == inputSide {
				d.addValues("MCP-INPUT-DEFAULT-CHANGED", kaddr, x, y, "")
			} else {
				d.addValues("MCP-SCHEMA-ANNOTATION-CHANGED", kaddr, x, y, "")
			}
		default:
			if rel, ok := constraintRelation(k, x, y); ok {
				d.rel(s, "CONSTRAINT", rel, kaddr, x, y, "")
			} else {
				d.rel(s, "SCHEMA", different, kaddr, x, y, fmt.Sprintf("keyword %q changed; mcpform cannot tell which values it now accepts", k))
			}
		}
	}
}

// rel adds the finding MCP-<side>-<family>-<relation>.
func (d *differ) rel(s side, family string, r relation, addr string, x, y any, detail string) {
	if r == same {
		// Spelled differently, same values accepted: the lock's bytes
		// change, the contract does not.
		d.addValues("MCP-ITEM-EQUIVALENT-CHANGED", addr, x, y, detail)
		return
	}
	d.addValues("MCP-"+string(s)+"-"+family+"-"+string(r), addr, x, y, detail)
}

// schemaObject returns a schema's keywords: true and absent are the empty
// schema; ok is false for false and for anything that is not a schema.
func schemaObject(v any) (map[string]any, bool) {
	switch x := v.(type) {
	case nil:
		return map[string]any{}, true
	case bool:
		if x {
			return map[string]any{}, true
		}
		return nil, false
	case map[string]any:
		return x, true
	}
	return nil, false
}

// compare relates two sets given which contains which.
func compare(aInB, bInA bool) relation {
	switch {
	case aInB && bInA:
		return same
	case bInA:
		return narrowed
	case aInB:
		return widened
	}
	return different
}

// typeRelation relates two "type" keywords. Absent means every type;
// "integer" is contained in "number".
func typeRelation(x, y any) relation {
	a, aok := typeSet(x)
	b, bok := typeSet(y)
	if !aok || !bok {
		return different
	}
	return compare(typesIn(a, b), typesIn(b, a))
}

func typeSet(v any) (map[string]bool, bool) {
	switch t := v.(type) {
	case nil:
		return nil, true // all types
	case string:
		return map[string]bool{t: true}, true
	case []any:
		return stringSet(t)
	}
	return nil, false
}

// typesIn reports whether every type in a is accepted by b (nil = all).
func typesIn(a, b map[string]bool) bool {
	if b == nil {
		return true
	}
	if a == nil {
		return false
	}
	for t := range a {
		if !b[t] && !(t == "integer" && b["number"]) {
			return false
		}
	}
	return true
}

// enum relates the allowed-value sets of enum and const together (const is
// a one-value enum), reported at the keyword that changed.
func (d *differ) enum(s side, addr string, a, b map[string]any) {
	as, aok := enumSet(a)
	bs, bok := enumSet(b)
	rel := different
	if aok && bok {
		rel = compare(valuesIn(as, bs), valuesIn(bs, as))
	}
	k := "enum"
	if _, ok := a["enum"]; !ok {
		if _, ok := b["enum"]; !ok {
			k = "const"
		}
	}
	d.rel(s, "ENUM", rel, addr+"."+k, a[k], b[k], "")
}

// enumSet returns the allowed values (nil = any), ok false when malformed.
func enumSet(m map[string]any) ([]any, bool) {
	var out []any
	all := true
	if c, ok := m["const"]; ok {
		out, all = []any{c}, false
	}
	if e, ok := m["enum"]; ok {
		list, ok := e.([]any)
		if !ok {
			return nil, false
		}
		if all {
			out, all = list, false
		} else {
			// Both: the intersection.
			out = filter(out, func(v any) bool { return contains(list, v) })
		}
	}
	if all {
		return nil, true
	}
	if out == nil {
		out = []any{}
	}
	return out, true
}

func valuesIn(a, b []any) bool {
	if b == nil {
		return true
	}
	if a == nil {
		return false
	}
	for _, v := range a {
		if !contains(b, v) {
			return false
		}
	}
	return true
}

func contains(list []any, v any) bool {
	for _, w := range list {
		if equalJSON(v, w) {
			return true
		}
	}
	return false
}

func filter(list []any, keep func(any) bool) []any {
	out := []any{}
	for _, v := range list {
		if keep(v) {
			out = append(out, v)
		}
	}
	return out
}

// properties diffs properties and required together, so that a property
// added as required is one finding, not two.
func (d *differ) properties(s side, addr string, a, b map[string]any) {
	pa, _ := a["properties"].(map[string]any)
	pb, _ := b["properties"].(map[string]any)
	if (a["properties"] != nil && pa == nil) || (b["properties"] != nil && pb == nil) {
		d.rel(s, "SCHEMA", different, addr+".properties", a["properties"], b["properties"], "properties is not an object")
		return
	}
	ra, aok := stringSet(a["required"])
	rb, bok := stringSet(b["required"])
	if !aok || !bok {
		d.rel(s, "SCHEMA", different, addr+".required", a["required"], b["required"], "required is not a list of names")
		return
	}
	for _, n := range unionKeys(pa, pb) {
		x, inA := pa[n]
		y, inB := pb[n]
		paddr := addr + ".properties." + n
		switch {
		case !inA:
			rule := "MCP-" + string(s) + "-PROPERTY-ADDED"
			if s == inputSide && rb[n] {
				rule = "MCP-INPUT-PROPERTY-ADDED-REQUIRED"
			}
			d.addValues(rule, paddr, nil, y, "")
		case !inB:
			d.addValues("MCP-"+string(s)+"-PROPERTY-REMOVED", paddr, x, nil, "")
		default:
			d.schema(s, paddr, x, y)
		}
	}
	names := make([]string, 0, len(ra)+len(rb))
	for n := range ra {
		names = append(names, n)
	}
	for n := range rb {
		if !ra[n] {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		if ra[n] == rb[n] {
			continue
		}
		_, inA := pa[n]
		_, inB := pb[n]
		if inA != inB {
			continue // reported as the property added or removed
		}
		rule := "MCP-" + string(s) + "-PROPERTY-OPTIONAL"
		if rb[n] {
			rule = "MCP-" + string(s) + "-PROPERTY-REQUIRED"
		}
		d.addValues(rule, addr+".required."+n, ra[n], rb[n], "")
	}
}

func stringSet(v any) (map[string]bool, bool) {
	return indexList(v, false, func(e any) (string, bool, bool) {
		s, ok := e.(string)
		return s, true, ok
	})
}

// indexList indexes a JSON array by the key entry gives each element; ok
// is false when v is not an array, when entry rejects an element, or, if
// unique, when two elements have the same key. A missing list is an empty
// one.
func indexList[V any](v any, unique bool, entry func(any) (string, V, bool)) (map[string]V, bool) {
	out := map[string]V{}
	if v == nil {
		return out, true
	}
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	for _, e := range list {
		k, val, ok := entry(e)
		if !ok {
			return nil, false
		}
		if _, dup := out[k]; unique && dup {
			return nil, false
		}
		out[k] = val
	}
	return out, true
}

// additional diffs additionalProperties: absent, true and {} allow any
// extra property, false none, a schema those it accepts.
func (d *differ) additional(s side, addr string, x, y any) {
	kind := func(v any) int { // 0 any, 1 schema, 2 none
		switch t := v.(type) {
		case nil:
			return 0
		case bool:
			if t {
				return 0
			}
			return 2
		case map[string]any:
			if len(t) == 0 {
				return 0
			}
			return 1
		}
		return -1
	}
	kx, ky := kind(x), kind(y)
	switch {
	case kx < 0 || ky < 0:
		d.rel(s, "ADDITIONAL-PROPERTIES", different, addr, x, y, "")
	case kx == ky && kx == 1:
		d.schema(s, addr, x, y)
	case kx < ky:
		d.rel(s, "ADDITIONAL-PROPERTIES", narrowed, addr, x, y, "")
	case kx > ky:
		d.rel(s, "ADDITIONAL-PROPERTIES", widened, addr, x, y, "")
	default: // {} for true, say
		d.rel(s, "ADDITIONAL-PROPERTIES", same, addr, x, y, "")
	}
}

// anyOf relates two anyOf lists: with one branch changed in place, the
// branch is diffed (anyOf is monotone in each branch); otherwise branches
// are compared as sets. Absent anyOf accepts anything.
func (d *differ) anyOf(s side, addr string, x, y any) {
	a, aok := x.([]any)
	b, bok := y.([]any)
	switch {
	case x == nil && bok:
		d.rel(s, "ANYOF", narrowed, addr, x, y, "")
		return
	case y == nil && aok:
		d.rel(s, "ANYOF", widened, addr, x, y, "")
		return
	case !aok || !bok:
		d.rel(s, "ANYOF", different, addr, x, y, "")
		return
	}
	if len(a) == len(b) {
		diff := -1
		for i := range a {
			if !equalJSON(a[i], b[i]) {
				if diff >= 0 {
					diff = -2
					break
				}
				diff = i
			}
		}
		if diff >= 0 {
			d.schema(s, fmt.Sprintf("%s.%d", addr, diff), a[diff], b[diff])
			return
		}
	}
	d.rel(s, "ANYOF", compare(valuesIn(a, b), valuesIn(b, a)), addr, x, y, "")
}

// Value constraints whose direction is decidable.
var (
	lowerBounds = map[string]bool{"minimum": true, "exclusiveMinimum": true, "minLength": true, "minItems": true, "minProperties": true, "minContains": true}
	upperBounds = map[string]bool{"maximum": true, "exclusiveMaximum": true, "maxLength": true, "maxItems": true, "maxProperties": true, "maxContains": true}
	presence    = map[string]bool{"pattern": true, "format": true, "multipleOf": true, "uniqueItems": true}
)

// constraintRelation relates a changed value constraint; ok is false for a
// keyword that is not one.
func constraintRelation(k string, x, y any) (relation, bool) {
	lo, hi, pr := lowerBounds[k], upperBounds[k], presence[k]
	if !lo && !hi && !pr {
		return "", false
	}
	if k == "uniqueItems" {
		bx, by := boolOr(x, false), boolOr(y, false)
		return compare(!by || bx, !bx || by), true
	}
	switch {
	case x == nil:
		return narrowed, true
	case y == nil:
		return widened, true
	case pr:
		return different, true
	}
	nx, ok1 := x.(json.Number)
	ny, ok2 := y.(json.Number)
	if !ok1 || !ok2 {
		return different, true // draft-04 boolean exclusiveMinimum, say
	}
	fx, err1 := nx.Float64()
	fy, err2 := ny.Float64()
	if err1 != nil || err2 != nil {
		return different, true
	}
	if fx == fy {
		return same, true
	}
	if (fy > fx) == lo {
		return narrowed, true
	}
	return widened, true
}
