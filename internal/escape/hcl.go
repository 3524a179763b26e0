package escape

import (
	"strings"
	"unicode/utf8"
)

// HCLString writes s as an HCL string literal for a file a person reviews:
// template sequences are escaped ("${" as "$${", "%{" as "%%{") so that text
// such as a client's "${input:token}" stays text instead of becoming an
// interpolation, and hidden characters (Hidden, and invalid UTF-8) are
// written as escapes so that the reviewer sees them.
func HCLString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case (r == '$' || r == '%') && strings.HasPrefix(s[i+1:], "{"):
			b.WriteRune(r)
			b.WriteRune(r)
		case r == utf8.RuneError || Hidden(r):
			WriteU(&b, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
