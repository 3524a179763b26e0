package strictjson

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mcpform/mcpform/internal/jsonscan"
)

// maxDepth is the deepest nesting of objects and arrays Check accepts.
const maxDepth = 128

// Error describes why Check refused its input.
type Error struct {
	Offset int    // byte offset of the problem
	Path   string // JSON path of the value where it was found, e.g. $.servers["time"].tools[3]
	Msg    string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s at %s (byte %d)", e.Msg, e.Path, e.Offset)
}

// Check reports the first reason data is not a single strict JSON value.
// Surrounding whitespace is allowed.
func Check(data []byte) error {
	// Scanners are pooled with their path and key stacks: Check runs on
	// every message through the proxy, and fresh stacks were most of what
	// it allocated.
	s := scanners.Get().(*scanner)
	s.data, s.pos, s.path, s.keys = data, 0, s.path[:0], s.keys[:0]
	err := s.check()
	clear(s.keys[:cap(s.keys)])
	clear(s.path[:cap(s.path)])
	s.data = nil
	scanners.Put(s)
	return err
}

var scanners = sync.Pool{New: func() any { return new(scanner) }}

func (s *scanner) check() error {
	s.skipSpace()
	if err := s.value(0); err != nil {
		return err
	}
	s.skipSpace()
	if s.pos != len(s.data) {
		return s.fail("unexpected data after the JSON value")
	}
	return nil
}

type scanner struct {
	data []byte
	pos  int
	path []segment // where the scanner is; turned into text only on failure
	keys [][]byte  // keys of the open objects, innermost last; reused
}

// segment is one step of the path: an object key or an array index.
type segment struct {
	key   []byte
	index int // -1 for a key
}

func (s *scanner) fail(msg string) error {
	var b strings.Builder
	b.WriteByte('$')
	for _, seg := range s.path {
		if seg.index < 0 {
			b.WriteString("[" + strconv.Quote(string(seg.key)) + "]")
		} else {
			b.WriteString("[" + strconv.Itoa(seg.index) + "]")
		}
	}
	return &Error{Offset: s.pos, Path: b.String(), Msg: msg}
}

func (s *scanner) skipSpace() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

func (s *scanner) value(depth int) error {
	if s.pos >= len(s.data) {
		return s.fail("unexpected end of JSON")
	}
	switch c := s.data[s.pos]; {
	case c == '{':
		if depth >= maxDepth {
			return s.fail(fmt.Sprintf("nesting deeper than %d", maxDepth))
		}
		return s.object(depth + 1)
	case c == '[':
		if depth >= maxDepth {
			return s.fail(fmt.Sprintf("nesting deeper than %d", maxDepth))
		}
		return s.array(depth + 1)
	case c == '"':
		_, err := s.str(false)
		return err
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	}
	return s.fail(fmt.Sprintf("invalid character %q looking for a value", s.data[s.pos]))
}

func (s *scanner) literal(lit string) error {
	if len(s.data)-s.pos < len(lit) || string(s.data[s.pos:s.pos+len(lit)]) != lit {
		return s.fail("invalid literal")
	}
	s.pos += len(lit)
	return nil
}

func (s *scanner) object(depth int) error {
	s.pos++ // '{'
	s.skipSpace()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		return nil
	}
	// Seen keys: on the shared stack for the common small object,
	// switching to a map for a large one.
	base := len(s.keys)
	var big map[string]struct{}
	for {
		if s.pos >= len(s.data) || s.data[s.pos] != '"' {
			return s.fail("expected a string key")
		}
		keyStart := s.pos
		key, err := s.str(true)
		if err != nil {
			return err
		}
		dup := false
		if big != nil {
			_, dup = big[string(key)]
			big[string(key)] = struct{}{}
		} else {
			for _, k := range s.keys[base:] {
				if string(k) == string(key) {
					dup = true
					break
				}
			}
			s.keys = append(s.keys, key)
			if len(s.keys)-base > 16 {
				big = make(map[string]struct{}, 32)
				for _, k := range s.keys[base:] {
					big[string(k)] = struct{}{}
				}
			}
		}
		if dup {
			s.pos = keyStart
			return s.fail(fmt.Sprintf("duplicate key %s", strconv.Quote(string(key))))
		}
		s.skipSpace()
		if s.pos >= len(s.data) || s.data[s.pos] != ':' {
			return s.fail("expected ':' after an object key")
		}
		s.pos++
		s.skipSpace()
		s.path = append(s.path, segment{key: key, index: -1})
		if err := s.value(depth); err != nil {
			return err
		}
		s.path = s.path[:len(s.path)-1]
		s.skipSpace()
		if s.pos >= len(s.data) {
			return s.fail("unexpected end of JSON in an object")
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
			s.skipSpace()
		case '}':
			s.pos++
			s.keys = s.keys[:base]
			return nil
		default:
			return s.fail("expected ',' or '}' in an object")
		}
	}
}

func (s *scanner) array(depth int) error {
	s.pos++ // '['
	s.skipSpace()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
		return nil
	}
	for i := 0; ; i++ {
		s.path = append(s.path, segment{index: i})
		if err := s.value(depth); err != nil {
			return err
		}
		s.path = s.path[:len(s.path)-1]
		s.skipSpace()
		if s.pos >= len(s.data) {
			return s.fail("unexpected end of JSON in an array")
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
			s.skipSpace()
		case ']':
			s.pos++
			return nil
		default:
			return s.fail("expected ',' or ']' in an array")
		}
	}
}

// str scans a string. With decode it returns the unescaped value (for keys);
// otherwise it only validates.
func (s *scanner) str(decode bool) ([]byte, error) {
	s.pos++ // opening quote
	start := s.pos
	// Fast path: no escapes.
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			raw := s.data[start:s.pos]
			s.pos++
			if !utf8.Valid(raw) {
				s.pos = start
				return nil, s.fail("invalid UTF-8 in a string")
			}
			if decode {
				return raw, nil
			}
			return nil, nil
		case c == '\\':
			return s.strSlow(start, decode)
		case c < 0x20:
			return nil, s.fail("control character in a string")
		}
		s.pos++
	}
	return nil, s.fail("unterminated string")
}

func (s *scanner) strSlow(start int, decode bool) ([]byte, error) {
	if !utf8.Valid(s.data[start:s.pos]) {
		return nil, s.fail("invalid UTF-8 in a string")
	}
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			s.pos++
			if !decode {
				return nil, nil
			}
			// Valid now: decoding is jsonscan's, as everywhere else.
			return jsonscan.AppendUnquoted(nil, s.data[start-1:s.pos]), nil
		case c < 0x20:
			return nil, s.fail("control character in a string")
		case c == '\\':
			if s.pos+1 >= len(s.data) {
				return nil, s.fail("unterminated escape")
			}
			e := s.data[s.pos+1]
			s.pos += 2
			switch e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				r, ok := s.hex4()
				if !ok {
					return nil, s.fail("invalid \\u escape")
				}
				if utf16.IsSurrogate(r) {
					// A high surrogate must be followed by a low one; a
					// lone surrogate decodes differently across parsers.
					if s.pos+1 < len(s.data) && s.data[s.pos] == '\\' && s.data[s.pos+1] == 'u' {
						s.pos += 2
						r2, ok := s.hex4()
						if !ok {
							return nil, s.fail("invalid \\u escape")
						}
						r = utf16.DecodeRune(r, r2)
					} else {
						r = utf8.RuneError
					}
					if r == utf8.RuneError {
						return nil, s.fail("lone UTF-16 surrogate in a \\u escape")
					}
				}
			default:
				return nil, s.fail(fmt.Sprintf("invalid escape \\%c", e))
			}
		default:
			// A run of plain bytes must be UTF-8.
			runStart := s.pos
			for s.pos < len(s.data) && s.data[s.pos] != '"' && s.data[s.pos] != '\\' && s.data[s.pos] >= 0x20 {
				s.pos++
			}
			if !utf8.Valid(s.data[runStart:s.pos]) {
				s.pos = runStart
				return nil, s.fail("invalid UTF-8 in a string")
			}
		}
	}
	return nil, s.fail("unterminated string")
}

func (s *scanner) hex4() (rune, bool) {
	r, ok := jsonscan.Hex4(s.data[s.pos:])
	if ok {
		s.pos += 4
	}
	return r, ok
}

func (s *scanner) number() error {
	if s.data[s.pos] == '-' {
		s.pos++
	}
	switch {
	case s.pos < len(s.data) && s.data[s.pos] == '0':
		s.pos++
	case s.pos < len(s.data) && s.data[s.pos] >= '1' && s.data[s.pos] <= '9':
		for s.pos < len(s.data) && s.data[s.pos] >= '0' && s.data[s.pos] <= '9' {
			s.pos++
		}
	default:
		return s.fail("invalid number")
	}
	if s.pos < len(s.data) && s.data[s.pos] == '.' {
		s.pos++
		if !s.digits() {
			return s.fail("invalid number: no digits after '.'")
		}
	}
	if s.pos < len(s.data) && (s.data[s.pos] == 'e' || s.data[s.pos] == 'E') {
		s.pos++
		if s.pos < len(s.data) && (s.data[s.pos] == '+' || s.data[s.pos] == '-') {
			s.pos++
		}
		if !s.digits() {
			return s.fail("invalid number: no digits in the exponent")
		}
	}
	return nil
}

func (s *scanner) digits() bool {
	start := s.pos
	for s.pos < len(s.data) && s.data[s.pos] >= '0' && s.data[s.pos] <= '9' {
		s.pos++
	}
	return s.pos > start
}
