package runtime

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/mcpform/mcpform/internal/jsonscan"
)

// The proxy rewrites messages by splicing raw JSON: it finds the top-level
// members of an object and copies the ones it keeps byte for byte, so a large
// tool result is never decoded into Go values and encoded again. Every input
// has passed mcp.DecodeMessage (strict JSON) first, so the scanner below may
// assume well-formed JSON.

// member is one top-level member of an object: its key as written (quotes
// included) and its value. Its KeyIs compares after unescaping: a client
// that spells "_meta" as "\u005fmeta" must not get a second _meta past the
// proxy.
type member = jsonscan.Member

// isEnvelopeKey reports whether a _meta member is one of the 2026-07-28
// envelope keys (io.modelcontextprotocol/…), after unescaping.
func isEnvelopeKey(m member) bool {
	if bytes.IndexByte(m.Key, '\\') < 0 {
		return bytes.HasPrefix(m.Key, []byte(metaKeyPrefix))
	}
	s, _ := stringValue(m.Key)
	return strings.HasPrefix(s, metaKeyPrefix[1:])
}

// members and find are jsonscan's (the scanner shared with mcp and lock),
// under the names the proxy uses everywhere.
func members(dst []member, obj []byte) []member { return jsonscan.Members(dst, obj) }
func find(obj []byte, name string) []byte       { return jsonscan.Find(obj, name) }

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
		b = append(b, m.Key...)
		b = append(b, ':')
		b = append(b, m.Value...)
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

func isMeta(m member) bool { return m.KeyIs("_meta") }
