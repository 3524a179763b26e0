package lock

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Sample is one sample call of mcp.hcl's sample "TOOL" block, under the
// entry's "mcpform" key as samples.TOOL (docs/LOCKFILE.md, "Samples"): the
// arguments the reviewer chose, whether the tool may be called although it
// is not marked read-only, and the shape of the result plan saw. The shape
// is a fingerprint of the result's structure, not of its values: plan and
// verify call the tool again and compare.
type Sample struct {
	// Arguments are the call's arguments, a JSON object (compact).
	Arguments json.RawMessage `json:"arguments"`
	// AllowSideEffects is mcp.hcl's allow_side_effects: the tool is called
	// although its annotations do not say readOnlyHint = true. false is
	// left out.
	AllowSideEffects bool `json:"allowSideEffects,omitempty"`
	// Shape is the result's fingerprint; nil when the sample was not
	// called (the tool is not marked read-only).
	Shape *ResultShape `json:"shape,omitempty"`
}

// ResultShape is the fingerprint of a tools/call result: whether it is a
// tool error, the types of its content blocks in order (a run of blocks of
// one type is one entry: how many blocks a result has is a value), and the
// shape of its structuredContent.
type ResultShape struct {
	IsError bool `json:"isError,omitempty"`
	// Content are the content blocks' types, each one of ContentTypes,
	// no two neighbours equal; [] for no content.
	Content []string `json:"content"`
	// StructuredContent is nil when the result has none.
	StructuredContent *Shape `json:"structuredContent,omitempty"`
}

// ContentTypes are the content block types MCP defines, the only ones a
// shape records.
var ContentTypes = []string{"audio", "image", "resource", "resource_link", "text"}

// JSONTypes are the JSON types a Shape names ("number" for every number:
// integer or not is a value).
var JSONTypes = []string{"array", "boolean", "null", "number", "object", "string"}

// Shape is the shape of a JSON value, written as a small subset of JSON
// Schema: {"type": T} where T is one type name or, for a value seen with
// several types (the elements of one array), their sorted list;
// "properties" the shape of each key of an object (sorted, as the writer
// sorts every map), "items" the shape every element of an array has (the
// union of the elements' shapes; absent when only empty arrays were seen).
type Shape struct {
	Types      []string
	Properties map[string]*Shape
	Items      *Shape
}

// Limits of a shape, so that a result cannot grow the lock without bound.
const (
	// MaxShapeDepth is the deepest nesting of objects and arrays a shape
	// describes.
	MaxShapeDepth = 32
	// MaxShapeNodes is the most values (keys and element shapes) one
	// shape holds.
	MaxShapeNodes = 4096
)

// Has reports whether s admits type t.
func (s *Shape) Has(t string) bool { return slices.Contains(s.Types, t) }

type shapeJSON struct {
	Type       json.RawMessage   `json:"type"`
	Properties map[string]*Shape `json:"properties,omitempty"`
	Items      *Shape            `json:"items,omitempty"`
}

// MarshalJSON writes the shape's canonical form: "type" a string when it
// is one type, properties only for an object with keys, items only for an
// array whose elements were seen.
func (s *Shape) MarshalJSON() ([]byte, error) {
	var t []byte
	var err error
	if len(s.Types) == 1 {
		t, err = json.Marshal(s.Types[0])
	} else {
		t, err = json.Marshal(s.Types)
	}
	if err != nil {
		return nil, err
	}
	doc := shapeJSON{Type: t, Items: s.Items}
	if len(s.Properties) > 0 {
		doc.Properties = s.Properties
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// parseSamples decodes mcpform.samples: an object of tool name to sample,
// each exactly arguments (an object), allowSideEffects (true, or absent)
// and shape (canonical: sorted types, no empty properties, neighbours in
// content distinct), bounded.
func parseSamples(raw json.RawMessage) (map[string]Sample, error) {
	const what = "mcpform.samples"
	m, err := object(raw, nil, what)
	if err != nil {
		return nil, err
	}
	tools := make([]string, 0, len(m))
	for tool := range m {
		tools = append(tools, tool)
	}
	sort.Strings(tools)
	out := make(map[string]Sample, len(m))
	for _, tool := range tools {
		v := m[tool]
		w := fmt.Sprintf("%s[%q]", what, tool)
		if tool == "" {
			return nil, fmt.Errorf("%s has an empty tool name", what)
		}
		sm, err := object(v, []string{"arguments", "allowSideEffects", "shape"}, w)
		if err != nil {
			return nil, err
		}
		var s Sample
		args, ok := sm["arguments"]
		if !ok || !isObject(args) {
			return nil, fmt.Errorf("%s.arguments is missing or not an object", w)
		}
		s.Arguments = compact(args)
		if a, ok := sm["allowSideEffects"]; ok {
			if string(bytes.TrimSpace(a)) != "true" {
				return nil, fmt.Errorf("%s.allowSideEffects must be true when present (false is written by leaving it out)", w)
			}
			s.AllowSideEffects = true
		}
		if sh, ok := sm["shape"]; ok {
			if s.Shape, err = parseResultShape(sh, w+".shape"); err != nil {
				return nil, err
			}
		}
		out[tool] = s
	}
	return out, nil
}

func parseResultShape(raw json.RawMessage, what string) (*ResultShape, error) {
	m, err := object(raw, []string{"isError", "content", "structuredContent"}, what)
	if err != nil {
		return nil, err
	}
	r := &ResultShape{}
	if v, ok := m["isError"]; ok {
		if string(bytes.TrimSpace(v)) != "true" {
			return nil, fmt.Errorf("%s.isError must be true when present (false is written by leaving it out)", what)
		}
		r.IsError = true
	}
	c, ok := m["content"]
	if !ok {
		return nil, fmt.Errorf("%s.content is missing", what)
	}
	if r.Content, err = stringList(c, what+".content"); err != nil {
		return nil, err
	}
	for i, t := range r.Content {
		if !slices.Contains(ContentTypes, t) {
			return nil, fmt.Errorf("%s.content[%d] %q is not a content type (%s)", what, i, t, strings.Join(ContentTypes, ", "))
		}
		if i > 0 && r.Content[i-1] == t {
			return nil, fmt.Errorf("%s.content repeats %q: a run of blocks of one type is written once", what, t)
		}
	}
	if sc, ok := m["structuredContent"]; ok {
		nodes := 0
		if r.StructuredContent, err = parseShape(sc, what+".structuredContent", 0, &nodes); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func parseShape(raw json.RawMessage, what string, depth int, nodes *int) (*Shape, error) {
	if *nodes++; *nodes > MaxShapeNodes {
		return nil, fmt.Errorf("%s: a shape holds at most %d values", what, MaxShapeNodes)
	}
	m, err := object(raw, []string{"type", "properties", "items"}, what)
	if err != nil {
		return nil, err
	}
	s := &Shape{}
	t, ok := m["type"]
	if !ok {
		return nil, fmt.Errorf("%s.type is missing", what)
	}
	switch tt := bytes.TrimSpace(t); {
	case len(tt) > 0 && tt[0] == '"':
		var one string
		if err := json.Unmarshal(tt, &one); err != nil {
			return nil, fmt.Errorf("%s.type is not a string", what)
		}
		s.Types = []string{one}
	default:
		if s.Types, err = stringList(tt, what+".type"); err != nil {
			return nil, err
		}
		if len(s.Types) < 2 {
			return nil, fmt.Errorf("%s.type: a list names two types or more (one is written as a string)", what)
		}
	}
	for i, ty := range s.Types {
		if !slices.Contains(JSONTypes, ty) {
			return nil, fmt.Errorf("%s.type %q is not a JSON type (%s)", what, ty, strings.Join(JSONTypes, ", "))
		}
		if i > 0 && s.Types[i-1] >= ty {
			return nil, fmt.Errorf("%s.type is not sorted without repeats", what)
		}
	}
	if p, ok := m["properties"]; ok {
		if !s.Has("object") {
			return nil, fmt.Errorf("%s.properties is set for a type that is not an object", what)
		}
		if depth >= MaxShapeDepth {
			return nil, fmt.Errorf("%s: a shape nests at most %d deep", what, MaxShapeDepth)
		}
		pm, err := object(p, nil, what+".properties")
		if err != nil {
			return nil, err
		}
		if len(pm) == 0 {
			return nil, fmt.Errorf("%s.properties is empty (an object without keys is written without properties)", what)
		}
		s.Properties = make(map[string]*Shape, len(pm))
		keys := make([]string, 0, len(pm))
		for k := range pm {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if s.Properties[k], err = parseShape(pm[k], fmt.Sprintf("%s.properties[%q]", what, k), depth+1, nodes); err != nil {
				return nil, err
			}
		}
	}
	if it, ok := m["items"]; ok {
		if !s.Has("array") {
			return nil, fmt.Errorf("%s.items is set for a type that is not an array", what)
		}
		if depth >= MaxShapeDepth {
			return nil, fmt.Errorf("%s: a shape nests at most %d deep", what, MaxShapeDepth)
		}
		if s.Items, err = parseShape(it, what+".items", depth+1, nodes); err != nil {
			return nil, err
		}
	}
	return s, nil
}
