package lock

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf16"

	"github.com/gowebpki/jcs"

	"github.com/mcpform/mcpform/internal/jsonscan"
)

// This file is the lock's RFC 8785 (JSON Canonicalization Scheme) writer.
// gowebpki/jcs's Transform builds a tree of every value and allocated about
// seven times the size of a large lock while verifying it, over the issue's
// budget of four; the same rules written as one pass over already-validated
// bytes allocate almost nothing. Numbers still go through jcs.NumberToJSON
// (the ECMAScript number serialization is the subtle part), and
// FuzzCanonicalMatchesJCS holds every output equal to jcs.Transform's.

// appendCanonical appends the RFC 8785 form of the JSON value at the start
// of data (which must have passed strictjson.Check) and returns the rest of
// data after the value.
func appendCanonical(dst, data []byte) ([]byte, []byte, error) {
	data = skipSpace(data)
	if len(data) == 0 {
		return dst, data, fmt.Errorf("unexpected end of JSON")
	}
	switch c := data[0]; {
	case c == '{':
		return appendCanonicalObject(dst, data)
	case c == '[':
		dst = append(dst, '[')
		data = skipSpace(data[1:])
		if data[0] == ']' {
			return append(dst, ']'), data[1:], nil
		}
		for {
			var err error
			if dst, data, err = appendCanonical(dst, data); err != nil {
				return dst, data, err
			}
			data = skipSpace(data)
			if data[0] == ']' {
				return append(dst, ']'), data[1:], nil
			}
			dst = append(dst, ',')
			data = data[1:]
		}
	case c == '"':
		s, rest := scanString(data)
		return appendCanonicalString(dst, string(s)), rest, nil
	case c == 't':
		return append(dst, "true"...), data[4:], nil
	case c == 'f':
		return append(dst, "false"...), data[5:], nil
	case c == 'n':
		return append(dst, "null"...), data[4:], nil
	default:
		n := 0
		for n < len(data) && isNumberByte(data[n]) {
			n++
		}
		out, err := canonicalNumber(data[:n])
		if err != nil {
			return dst, data, err
		}
		return append(dst, out...), data[n:], nil
	}
}

type member struct {
	key   []byte // unescaped
	value []byte // the raw value
}

func appendCanonicalObject(dst, data []byte) ([]byte, []byte, error) {
	var buf [16]member
	members, rest := appendMembers(buf[:0], data)
	slices.SortFunc(members, func(a, b member) int { return compareUTF16(string(a.key), string(b.key)) })
	dst = append(dst, '{')
	for i, m := range members {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendCanonicalString(dst, string(m.key))
		dst = append(dst, ':')
		var err error
		if dst, _, err = appendCanonical(dst, m.value); err != nil {
			return dst, rest, err
		}
	}
	return append(dst, '}'), rest, nil
}

// scanMembers splits the object at the start of data into its members and
// returns the rest of data after the object.
func scanMembers(data []byte) ([]member, []byte) {
	return appendMembers(nil, data)
}

func appendMembers(members []member, data []byte) ([]member, []byte) {
	var buf [16]jsonscan.Member
	for _, m := range jsonscan.Members(buf[:0], data) {
		key, _ := scanString(m.Key)
		members = append(members, member{key: key, value: m.Value})
	}
	return members, data[jsonscan.SkipValue(data, 0):]
}

// scanElements splits the array at the start of data into its elements.
func scanElements(data []byte) [][]byte {
	return jsonscan.Elements(nil, data)
}

func skipSpace(data []byte) []byte { return data[jsonscan.SkipWS(data, 0):] }

// scanString decodes the string at the start of data. Without escapes the
// result shares data's memory.
func scanString(data []byte) ([]byte, []byte) {
	end := jsonscan.SkipString(data, 0)
	raw := data[:end]
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw[1 : end-1], data[end:]
	}
	return jsonscan.AppendUnquoted(make([]byte, 0, end), raw), data[end:]
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// canonicalNumber serializes a JSON number as ECMAScript does. Short
// integers are their own canonical form; everything else goes through
// jcs.NumberToJSON.
func canonicalNumber(num []byte) ([]byte, error) {
	if len(num) <= 15 && len(num) > 0 {
		plain := true
		for i, c := range num {
			if !(c >= '0' && c <= '9' || c == '-' && i == 0) {
				plain = false
				break
			}
		}
		if plain && !bytes.Equal(num, []byte("-0")) {
			return num, nil
		}
	}
	f, err := strconv.ParseFloat(string(num), 64)
	if err != nil {
		return nil, fmt.Errorf("number %s: %w", num, err)
	}
	s, err := jcs.NumberToJSON(f)
	if err != nil {
		return nil, fmt.Errorf("number %s: %w", num, err)
	}
	return []byte(s), nil
}

// appendCanonicalString writes s as RFC 8785 section 3.2.2.2 asks: only
// '"', '\\' and controls below U+0020 are escaped, the common controls with
// their short forms and the rest as lowercase \u00xx.
func appendCanonicalString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			dst = append(dst, '\\', '"')
		case c == '\\':
			dst = append(dst, '\\', '\\')
		case c >= 0x20:
			dst = append(dst, c)
		case c == '\b':
			dst = append(dst, '\\', 'b')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\f':
			dst = append(dst, '\\', 'f')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		default:
			const hex = "0123456789abcdef"
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
	}
	return append(dst, '"')
}

// compareUTF16 orders keys by their UTF-16 code units (RFC 8785 section
// 3.2.3). Byte order of UTF-8 agrees except where a supplementary-plane
// character meets one in U+E000–U+FFFF.
func compareUTF16(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			if a[i] < 0x80 && b[i] < 0x80 {
				return int(a[i]) - int(b[i])
			}
			return compareUTF16Slow(a, b)
		}
	}
	return len(a) - len(b)
}

func compareUTF16Slow(a, b string) int {
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			return int(ua[i]) - int(ub[i])
		}
	}
	return len(ua) - len(ub)
}
