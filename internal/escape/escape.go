package escape

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// String returns s with every hidden or reordering character escaped.
// Printable text, including non-ASCII letters, is kept as is; a backslash is
// doubled so that an escape in the output always stands for an escaped
// character, never for a literal backslash the server sent.
func String(s string) string {
	if isClean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])|0x100, 16)[1:])
			i++
			continue
		}
		i += size
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case Hidden(r):
			WriteU(&b, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Multiline is String but keeps line feeds (and tabs) as they are, for
// multi-line text such as instructions or a stderr tail shown as a block.
func Multiline(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		parts := strings.Split(l, "\t")
		for j, p := range parts {
			parts[j] = String(p)
		}
		lines[i] = strings.Join(parts, "\t")
	}
	return strings.Join(lines, "\n")
}

// WriteU writes r as a \u escape (\U beyond the Basic Multilingual
// Plane), in lower-case hex: how every escaper here shows a hidden rune.
func WriteU(b *strings.Builder, r rune) {
	if r > 0xffff {
		b.WriteString(`\U`)
		h := strconv.FormatUint(uint64(r), 16)
		b.WriteString(strings.Repeat("0", 8-len(h)))
		b.WriteString(h)
		return
	}
	b.WriteString(`\u`)
	h := strconv.FormatUint(uint64(r), 16)
	b.WriteString(strings.Repeat("0", 4-len(h)))
	b.WriteString(h)
}

// Hidden reports whether r is invisible or changes how the text around it is
// displayed: controls, bidi formatting, zero-width and other format
// characters, tag characters, and non-characters.
func Hidden(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f: // C0, DEL, C1
		return true
	case r == 0x00ad: // soft hyphen
		return true
	case r == 0x034f: // combining grapheme joiner
		return true
	case r == 0x061c: // Arabic letter mark
		return true
	case r == 0x115f || r == 0x1160 || r == 0x3164 || r == 0xffa0: // Hangul fillers
		return true
	case r == 0x180e: // Mongolian vowel separator
		return true
	case r >= 0x200b && r <= 0x200f: // zero-width space/joiners, LRM, RLM
		return true
	case r >= 0x2028 && r <= 0x202e: // line/paragraph separators, bidi embeddings and overrides
		return true
	case r >= 0x2060 && r <= 0x206f: // word joiner, invisible operators, bidi isolates
		return true
	case r == 0xfeff: // zero-width no-break space (BOM)
		return true
	case r >= 0xfe00 && r <= 0xfe0f: // variation selectors
		return true
	case r >= 0xfff9 && r <= 0xfffb: // interlinear annotations
		return true
	case r >= 0xe0000 && r <= 0xe007f: // tag characters
		return true
	case r >= 0xe0100 && r <= 0xe01ef: // variation selectors supplement
		return true
	case r >= 0x1bca0 && r <= 0x1bca3: // shorthand format controls
		return true
	case r >= 0x1d173 && r <= 0x1d17a: // musical symbol format controls
		return true
	case r&0xfffe == 0xfffe: // non-characters at the end of each plane
		return true
	case r >= 0xfdd0 && r <= 0xfdef:
		return true
	}
	return false
}

// isClean is the fast path: printable ASCII with no backslash.
func isClean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '\\' {
			return false
		}
	}
	return true
}

// Visible is for text mcpform wrote itself that may quote server text
// escaped at its source (an error message with a server's stderr tail): it
// escapes hidden characters as String does but keeps backslashes, line
// feeds and tabs, so an escape made at the source is not escaped twice.
// It is the last line of defence, not a substitute for escaping at the
// source.
func Visible(s string) string {
	clean := true
	for _, r := range s {
		if r != '\n' && r != '\t' && (Hidden(r) || r == utf8.RuneError) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])|0x100, 16)[1:])
		case r != '\n' && r != '\t' && Hidden(r):
			WriteU(&b, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
