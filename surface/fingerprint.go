package surface

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"

	"github.com/mcpform/mcpform/lock"
)

// Fingerprint is the shape of a tools/call result, as a sample records it
// in the lock (lock.ResultShape): isError, the content blocks' types in
// order (a run of one type counted once) and the JSON types and keys of
// structuredContent, never a value. Two results that differ only in
// values (numbers, strings, how many elements an array has, how many text
// blocks) have the same fingerprint. The result is the server's, untrusted:
// anything that is not a result MCP defines is an error, never a panic,
// and a shape deeper or larger than lock.MaxShapeDepth or
// lock.MaxShapeNodes is refused rather than stored.
func Fingerprint(result []byte) (*lock.ResultShape, error) {
	// One decode, numbers as json.Number (a number too large for a float
	// is still a number).
	dec := json.NewDecoder(bytes.NewReader(result))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, errors.New("the result is not a JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("the result is not one JSON value")
	}
	res, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("the result is not a JSON object")
	}
	out := &lock.ResultShape{Content: []string{}}
	switch e := res["isError"].(type) {
	case bool:
		out.IsError = e
	case nil:
	default:
		return nil, errors.New("the result's isError is not a boolean")
	}
	c, ok := res["content"]
	if !ok {
		return nil, errors.New("the result has no content (a tools/call result always has a content array)")
	}
	blocks, ok := c.([]any)
	if !ok {
		return nil, errors.New("the result's content is not an array of objects")
	}
	for i, b := range blocks {
		if b == nil {
			return nil, fmt.Errorf("content block %d has no type string", i)
		}
		block, ok := b.(map[string]any)
		if !ok {
			return nil, errors.New("the result's content is not an array of objects")
		}
		t, ok := block["type"].(string)
		if !ok {
			return nil, fmt.Errorf("content block %d has no type string", i)
		}
		if !slices.Contains(lock.ContentTypes, t) {
			// The type is the server's text: not quoted, only said.
			return nil, fmt.Errorf("content block %d has a type MCP does not define (the types are text, image, audio, resource, resource_link)", i)
		}
		if n := len(out.Content); n == 0 || out.Content[n-1] != t {
			out.Content = append(out.Content, t)
		}
	}
	if sc, ok := res["structuredContent"]; ok && sc != nil {
		s, err := ShapeOf(sc, 0)
		if err != nil {
			return nil, err
		}
		if n := Size(s); n > lock.MaxShapeNodes {
			return nil, fmt.Errorf("the result's structuredContent has a shape of %d keys and types, more than the %d a sample records: choose arguments with a smaller result", n, lock.MaxShapeNodes)
		}
		out.StructuredContent = s
	}
	return out, nil
}

// ShapeOf is the shape of a decoded JSON value (encoding/json's types,
// numbers as json.Number or float64) found at the given depth; deeper
// than lock.MaxShapeDepth is an error.
func ShapeOf(v any, depth int) (*lock.Shape, error) {
	switch v := v.(type) {
	case nil:
		return &lock.Shape{Types: []string{"null"}}, nil
	case bool:
		return &lock.Shape{Types: []string{"boolean"}}, nil
	case json.Number, float64:
		return &lock.Shape{Types: []string{"number"}}, nil
	case string:
		return &lock.Shape{Types: []string{"string"}}, nil
	case map[string]any:
		s := &lock.Shape{Types: []string{"object"}}
		if len(v) == 0 {
			return s, nil
		}
		if depth >= lock.MaxShapeDepth {
			return nil, tooDeep()
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		s.Properties = make(map[string]*lock.Shape, len(v))
		for _, k := range keys {
			p, err := ShapeOf(v[k], depth+1)
			if err != nil {
				return nil, err
			}
			s.Properties[k] = p
		}
		return s, nil
	case []any:
		s := &lock.Shape{Types: []string{"array"}}
		if len(v) == 0 {
			return s, nil
		}
		if depth >= lock.MaxShapeDepth {
			return nil, tooDeep()
		}
		for _, e := range v {
			es, err := ShapeOf(e, depth+1)
			if err != nil {
				return nil, err
			}
			s.Items = mergeInto(s.Items, es)
		}
		return s, nil
	}
	return nil, fmt.Errorf("a value of type %T has no JSON shape", v)
}

// Size is how many shapes s holds, itself included: what
// lock.MaxShapeNodes bounds.
func Size(s *lock.Shape) int {
	if s == nil {
		return 0
	}
	n := 1 + Size(s.Items)
	for _, p := range s.Properties {
		n += Size(p)
	}
	return n
}

func tooDeep() error {
	return fmt.Errorf("the result's structuredContent nests deeper than %d objects and arrays, deeper than a sample records: choose arguments with a smaller result", lock.MaxShapeDepth)
}

// mergeInto makes dst the shape of a value that has shape dst or shape
// src: the union of their types, of their keys (each key's shapes merged)
// and their element shapes merged. Either may be nil (nothing seen). Both
// are ShapeOf's own, fresh: dst is changed and src's parts may become
// dst's.
func mergeInto(dst, src *lock.Shape) *lock.Shape {
	switch {
	case dst == nil:
		return src
	case src == nil:
		return dst
	}
	grew := false
	for _, t := range src.Types {
		if !slices.Contains(dst.Types, t) {
			dst.Types = append(dst.Types, t)
			grew = true
		}
	}
	if grew {
		sort.Strings(dst.Types)
	}
	if len(src.Properties) > 0 {
		if dst.Properties == nil {
			dst.Properties = make(map[string]*lock.Shape, len(src.Properties))
		}
		for k, p := range src.Properties {
			dst.Properties[k] = mergeInto(dst.Properties[k], p)
		}
	}
	dst.Items = mergeInto(dst.Items, src.Items)
	return dst
}
