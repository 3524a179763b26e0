package lock

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
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
	data = skipSpace(data[1:])
	if data[0] == '}' {
		return members, data[1:]
	}
	for {
		key, rest := scanString(data)
		rest = skipSpace(rest)[1:] // ':'
		rest = skipSpace(rest)
		end := skipValue(rest)
		members = append(members, member{key: key, value: rest[:len(rest)-len(end)]})
		data = skipSpace(end)
		if data[0] == '}' {
			return members, data[1:]
		}
		data = skipSpace(data[1:])
	}
}

// scanElements splits the array at the start of data into its elements.
func scanElements(data []byte) [][]byte {
	var out [][]byte
	data = skipSpace(data[1:])
	if data[0] == ']' {
		return out
	}
	for {
		end := skipValue(data)
		out = append(out, data[:len(data)-len(end)])
		data = skipSpace(end)
		if data[0] == ']' {
			return out
		}
		data = skipSpace(data[1:])
	}
}

func skipSpace(data []byte) []byte {
	for len(data) > 0 && (data[0] == ' ' || data[0] == '\n' || data[0] == '\r' || data[0] == '\t') {
		data = data[1:]
	}
	return data
}

// skipValue returns data after the valid JSON value it starts with.
func skipValue(data []byte) []byte {
	switch data[0] {
	case '"':
		_, end := skipString(data)
		return end
	case '{', '[':
		depth := 0
		for i := 0; i < len(data); i++ {
			switch data[i] {
			case '"':
				_, end := skipString(data[i:])
				i = len(data) - len(end) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return data[i+1:]
				}
			}
		}
		return nil
	}
	n := 0
	for n < len(data) && (isNumberByte(data[n]) || data[n] >= 'a' && data[n] <= 'z') {
		n++
	}
	return data[n:]
}

// skipString returns whether the string at the start of data has escapes,
// and data after it.
func skipString(data []byte) (bool, []byte) {
	escaped := false
	for i := 1; i < len(data); i++ {
		switch data[i] {
		case '\\':
			escaped = true
			i++
		case '"':
			return escaped, data[i+1:]
		}
	}
	return escaped, nil
}

// scanString decodes the string at the start of data. Without escapes the
// result shares data's memory.
func scanString(data []byte) ([]byte, []byte) {
	escaped, rest := skipString(data)
	body := data[1 : len(data)-len(rest)-1]
	if !escaped {
		return body, rest
	}
	b := make([]byte, 0, len(body))
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\\' {
			b = append(b, c)
			continue
		}
		i++
		switch body[i] {
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r := hex4(body[i+1:])
			i += 4
			if utf16.IsSurrogate(r) && i+6 < len(body) && body[i+1] == '\\' && body[i+2] == 'u' {
				r = utf16.DecodeRune(r, hex4(body[i+3:]))
				i += 6
			}
			b = utf8.AppendRune(b, r)
		default: // '"', '\\', '/'
			b = append(b, body[i])
		}
	}
	return b, rest
}

func hex4(b []byte) rune {
	v, _ := strconv.ParseUint(string(b[:4]), 16, 32)
	return rune(v)
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
