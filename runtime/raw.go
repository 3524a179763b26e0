package runtime

import (
	"bytes"
	"encoding/json"
	"github.com/mcpform/mcpform/internal/jsonscan"
	"strconv"
	"strings"

	"github.com/mcpform/mcpform/mcp"
)

// The proxy rewrites messages by splicing raw JSON: it finds the top-level
// members of an object and copies the ones it keeps byte for byte, so a large
// tool result is never decoded into Go values and encoded again. Every input
// has passed mcp.DecodeMessage (strict JSON) first, so the scanner below may
// assume well-formed JSON.

// member is one top-level member of an object: its key as written (quotes
// included) and its value.
type member struct {
	key, value []byte
}

// keyIs reports whether the member's key is name, after unescaping: a
// client that spells "_meta" as "\u005fmeta" must not get a second _meta
// past the proxy.
func (m member) keyIs(name string) bool {
	if bytes.IndexByte(m.key, '\\') < 0 {
		return len(m.key) == len(name)+2 && string(m.key[1:len(m.key)-1]) == name
	}
	s, ok := stringValue(m.key)
	return ok && s == name
}

// isEnvelopeKey reports whether a _meta member is one of the 2026-07-28
// envelope keys (io.modelcontextprotocol/…), after unescaping.
func isEnvelopeKey(m member) bool {
	if bytes.IndexByte(m.key, '\\') < 0 {
		return bytes.HasPrefix(m.key, []byte(metaKeyPrefix))
	}
	s, _ := stringValue(m.key)
	return strings.HasPrefix(s, metaKeyPrefix[1:])
}

// members returns the top-level members of the JSON object obj, appending to
// dst. It returns nil for anything that is not an object.
func members(dst []member, obj []byte) []member {
	sc, ok := scanObject(obj)
	if !ok {
		return nil
	}
	for m, ok := sc.next(); ok; m, ok = sc.next() {
		dst = append(dst, m)
	}
	return dst
}

// memberScan walks the members of one JSON object, in order.
type memberScan struct {
	obj []byte
	i   int
}

// scanObject starts a walk of obj's members; ok is false when obj is not
// an object.
func scanObject(obj []byte) (memberScan, bool) {
	i := skipWS(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return memberScan{}, false
	}
	return memberScan{obj: obj, i: i + 1}, true
}

// next returns the next member; ok is false at the end of the object.
func (s *memberScan) next() (m member, ok bool) {
	obj, i := s.obj, skipWS(s.obj, s.i)
	if i < len(obj) && obj[i] == ',' {
		i = skipWS(obj, i+1)
	}
	if i >= len(obj) || obj[i] != '"' {
		s.i = len(obj)
		return member{}, false
	}
	ks := i
	i = skipString(obj, i)
	ke := i
	i = skipWS(obj, i)
	if i >= len(obj) || obj[i] != ':' {
		s.i = len(obj)
		return member{}, false
	}
	i = skipWS(obj, i+1)
	vs := i
	i = skipValue(obj, i)
	s.i = i
	return member{key: obj[ks:ke], value: obj[vs:i]}, true
}

// find returns the value of the member named name, or nil. It stops at the
// first match: the proxy reads only strict JSON, which has no duplicate
// keys.
func find(obj []byte, name string) []byte {
	sc, ok := scanObject(obj)
	if !ok {
		return nil
	}
	for m, ok := sc.next(); ok; m, ok = sc.next() {
		if m.keyIs(name) {
			return m.value
		}
	}
	return nil
}

// The scanner itself is internal/jsonscan, shared with mcp and lock.

func skipWS(b []byte, i int) int { return jsonscan.SkipWS(b, i) }

func skipString(b []byte, i int) int { return jsonscan.SkipString(b, i) }

func skipValue(b []byte, i int) int { return jsonscan.SkipValue(b, i) }

// stringValue decodes a JSON string value; ok is false for anything else.
func stringValue(raw []byte) (string, bool) { return jsonscan.String(raw) }

// compact returns raw without insignificant whitespace.
func compact(raw []byte) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return raw
	}
	return buf.Bytes()
}

// appendResponse appends one response line (with its newline) carrying
// result as written.
func appendResponse(b []byte, id mcp.ID, result []byte) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id.String()...)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, "}\n"...)
}

// appendError appends one error response line.
func appendError(b []byte, id mcp.ID, code int64, msg string, data []byte) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id.String()...)
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, code, 10)
	b = append(b, `,"message":`...)
	b = mcp.AppendQuoted(b, msg)
	if data != nil {
		b = append(b, `,"data":`...)
		b = append(b, data...)
	}
	return append(b, "}}\n"...)
}

// appendRequest appends one request or notification line (id zero: a
// notification).
func appendRequest(b []byte, id mcp.ID, method string, params []byte) []byte {
	b = append(b, `{"jsonrpc":"2.0",`...)
	if !id.IsZero() {
		b = append(b, `"id":`...)
		b = append(b, id.String()...)
		b = append(b, ',')
	}
	b = append(b, `"method":`...)
	b = mcp.AppendQuoted(b, method)
	if params != nil {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	return append(b, "}\n"...)
}

// oneLine reports whether raw may be written into a frame as it is: a
// received payload with a raw line break (legal JSON whitespace) must be
// compacted first.
func oneLine(raw []byte) []byte {
	if bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0 {
		return raw
	}
	return compact(raw)
}

// metaKeyPrefix marks the 2026-07-28 envelope keys in _meta, which the
// proxy sets itself and never passes from one side to the other.
const metaKeyPrefix = `"io.modelcontextprotocol/`

// rewriteObject appends obj with the members named in drop removed and the
// pre-encoded members extra (each `"key":value`) appended.
func rewriteObject(b, obj []byte, drop func(member) bool, extra ...[]byte) []byte {
	var buf [16]member
	b = append(b, '{')
	first := true
	for _, m := range members(buf[:0], obj) {
		if drop(m) {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, m.key...)
		b = append(b, ':')
		b = append(b, m.value...)
	}
	for _, e := range extra {
		if e == nil {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, e...)
	}
	return append(b, '}')
}

// metaWithout returns the _meta member of obj rebuilt without the envelope
// keys, plus the pre-encoded members extra; nil when nothing is left.
func metaWithout(obj []byte, extra ...[]byte) []byte {
	meta := find(obj, "_meta")
	any := false
	for _, e := range extra {
		any = any || e != nil
	}
	kept := false
	if meta != nil {
		var buf [16]member
		for _, m := range members(buf[:0], meta) {
			if !isEnvelopeKey(m) {
				kept = true
				break
			}
		}
	}
	if !kept && !any {
		return nil
	}
	b := []byte(`"_meta":`)
	if meta == nil {
		meta = []byte("{}")
	}
	return rewriteObject(b, meta, isEnvelopeKey, extra...)
}

func isMeta(m member) bool { return m.keyIs("_meta") }
