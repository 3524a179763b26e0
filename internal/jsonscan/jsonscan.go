package jsonscan

import (
	"bytes"
	"encoding/json"
	"unicode/utf16"
	"unicode/utf8"
)

// SkipWS returns the index of the first non-whitespace byte at or after i.
func SkipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// SkipString returns the index after the string starting at b[i]. It jumps
// from quote to quote (bytes.IndexByte is vectorised) and counts the
// backslashes before each.
func SkipString(b []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return len(b)
		}
		j += k
		n := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
		j++
	}
}

// structural marks the bytes SkipValue must look at inside a container.
var structural = [256]bool{'"': true, '{': true, '[': true, '}': true, ']': true}

// SkipValue returns the index after the value starting at b[i].
func SkipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return SkipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			if !structural[b[j]] {
				continue
			}
			switch b[j] {
			case '"':
				j = SkipString(b, j) - 1
			case '{', '[':
				depth++
			default:
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	return j
}

// Member is one member of an object: its key as written (quotes and any
// escapes included) and its raw value.
type Member struct {
	Key, Value []byte
}

// KeyIs reports whether the member's key is name after unescaping, so that
// "\u005fmeta" is "_meta" too.
func (m Member) KeyIs(name string) bool {
	if bytes.IndexByte(m.Key, '\\') < 0 {
		return len(m.Key) == len(name)+2 && string(m.Key[1:len(m.Key)-1]) == name
	}
	s, ok := String(m.Key)
	return ok && s == name
}

// Members appends the members of the object at the start of obj (after
// whitespace) to dst. It returns nil for anything that is not an object.
func Members(dst []Member, obj []byte) []Member {
	sc, ok := ScanObject(obj)
	if !ok {
		return nil
	}
	for m, ok := sc.Next(); ok; m, ok = sc.Next() {
		dst = append(dst, m)
	}
	return dst
}

// ObjectScan walks the members of one object, in order, without collecting
// them: what looks for one member stops there.
type ObjectScan struct {
	obj []byte
	i   int
}

// ScanObject starts a walk of the members of the object at the start of
// obj; ok is false when obj is not an object.
func ScanObject(obj []byte) (ObjectScan, bool) {
	i := SkipWS(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return ObjectScan{}, false
	}
	return ObjectScan{obj: obj, i: i + 1}, true
}

// Next returns the next member; ok is false at the end of the object.
func (s *ObjectScan) Next() (m Member, ok bool) {
	obj, i := s.obj, SkipWS(s.obj, s.i)
	if i < len(obj) && obj[i] == ',' {
		i = SkipWS(obj, i+1)
	}
	if i >= len(obj) || obj[i] != '"' {
		s.i = len(obj)
		return Member{}, false
	}
	ks := i
	i = SkipString(obj, i)
	ke := i
	i = SkipWS(obj, i)
	if i >= len(obj) || obj[i] != ':' {
		s.i = len(obj)
		return Member{}, false
	}
	i = SkipWS(obj, i+1)
	vs := i
	i = SkipValue(obj, i)
	s.i = i
	return Member{Key: obj[ks:ke], Value: obj[vs:i]}, true
}

// Elements appends the elements of the array at the start of arr to dst.
// It returns nil for anything that is not an array.
func Elements(dst [][]byte, arr []byte) [][]byte {
	i := SkipWS(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return nil
	}
	i++
	for {
		i = SkipWS(arr, i)
		if i >= len(arr) || arr[i] == ']' {
			return dst
		}
		if arr[i] == ',' {
			i = SkipWS(arr, i+1)
		}
		vs := i
		i = SkipValue(arr, i)
		if i == vs {
			return dst
		}
		dst = append(dst, arr[vs:i])
	}
}

// Find returns the value of the member of obj named name, or nil.
func Find(obj []byte, name string) []byte {
	sc, ok := ScanObject(obj)
	if !ok {
		return nil
	}
	for m, ok := sc.Next(); ok; m, ok = sc.Next() {
		if m.KeyIs(name) {
			return m.Value
		}
	}
	return nil
}

// String decodes a raw JSON string; ok is false for anything else.
func String(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// AppendUnquoted appends the text of the raw JSON string raw to dst,
// without allocating for the string itself. Escapes are decoded as
// RFC 8259 says; a lone surrogate (which strictjson refuses) becomes
// U+FFFD.
func AppendUnquoted(dst, raw []byte) []byte {
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return append(dst, body...)
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\\' || i+1 >= len(body) {
			dst = append(dst, c)
			continue
		}
		i++
		switch body[i] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			if i+4 >= len(body) {
				return dst
			}
			r, _ := Hex4(body[i+1:])
			i += 4
			if utf16.IsSurrogate(r) && i+6 < len(body) && body[i+1] == '\\' && body[i+2] == 'u' {
				r2, _ := Hex4(body[i+3:])
				r = utf16.DecodeRune(r, r2)
				i += 6
			}
			dst = utf8.AppendRune(dst, r)
		default: // '"', '\\', '/'
			dst = append(dst, body[i])
		}
	}
	return dst
}

// Hex4 decodes the four hex digits of a \u escape at the start of b; ok is
// false when b has fewer than four or one is not a hex digit.
func Hex4(b []byte) (r rune, ok bool) {
	if len(b) < 4 {
		return 0, false
	}
	for _, c := range b[:4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}
