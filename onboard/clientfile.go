package onboard

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/tailscale/hujson"
)

// A client's file is the user's, edited by hand and by the client: VS Code's
// and Cursor's mcp.json are JSON with comments and trailing commas (JWCC),
// and Windows editors save a UTF-8 byte order mark and CRLF line endings.
// Every reader here goes through standardJSON or readClientFile, and Merge
// writes the file back with its comments, layout, BOM and line endings as
// found.

var utf8BOM = []byte("\xef\xbb\xbf")

// clientFile is a client's configuration file as read.
type clientFile struct {
	bom bool
	// eol is the line ending of the lines Merge adds: "\r\n" when most of
	// the file's lines end so, else "\n". Lines already in the file keep
	// theirs.
	eol string
	// tree is the file without its BOM, as hujson's syntax tree, which
	// packs back byte for byte; its value is an object.
	tree hujson.Value
	// top is the top-level object decoded from the standardized tree,
	// checked as object checks it (no repeated key).
	top []member
}

// readClientFile parses a client's configuration file.
func readClientFile(data []byte) (*clientFile, error) {
	f := &clientFile{eol: lineEnding(data)}
	data, f.bom = bytes.CutPrefix(data, utf8BOM)
	tree, err := parseClientJSON(data)
	if err != nil {
		return nil, err
	}
	plain, err := standardJSON(data)
	if err != nil {
		return nil, err
	}
	if f.top, err = object(plain); err != nil {
		return nil, err
	}
	f.tree = tree
	return f, nil
}

// standardJSON returns a client file as plain JSON: the BOM removed,
// comments and trailing commas blanked out (lines stay where they were, so
// that a later error's line is the file's). import and client-config read
// every client file through it.
func standardJSON(data []byte) ([]byte, error) {
	// Standardize blanks comments in place, in the buffer the tree aliases,
	// so this is a tree of its own. (Value.Clone would not do: it drops a
	// trailing comma that follows its value directly.)
	tree, err := parseClientJSON(bytes.TrimPrefix(data, utf8BOM))
	if err != nil {
		return nil, err
	}
	tree.Standardize()
	return tree.Pack(), nil
}

// parseClientJSON checks a client file without its BOM (not UTF-16,
// within bounds) and parses it as JSON with comments and trailing commas.
// The tree aliases a copy of data: Merge and Standardize edit it in place.
func parseClientJSON(data []byte) (hujson.Value, error) {
	if err := notUTF16(data); err != nil {
		return hujson.Value{}, err
	}
	if err := checkBounds(data); err != nil {
		return hujson.Value{}, err
	}
	tree, err := hujson.Parse(bytes.Clone(data))
	if err != nil {
		return hujson.Value{}, syntaxError(err)
	}
	return tree, nil
}

// bytes returns the file, its BOM included.
func (f *clientFile) bytes() []byte {
	out := f.tree.Pack()
	if f.bom {
		out = append(bytes.Clone(utf8BOM), out...)
	}
	return out
}

// lineEnding is "\r\n" when at least half of data's lines end in CRLF.
func lineEnding(data []byte) string {
	crlf := bytes.Count(data, []byte("\r\n"))
	lf := bytes.Count(data, []byte("\n")) - crlf
	if crlf > 0 && crlf >= lf {
		return "\r\n"
	}
	return "\n"
}

// notUTF16 refuses a file whose byte order mark says UTF-16, which Windows
// Notepad writes as "Unicode": it would otherwise fail on its first byte
// with an error that says nothing useful.
func notUTF16(data []byte) error {
	if bytes.HasPrefix(data, []byte{0xff, 0xfe}) || bytes.HasPrefix(data, []byte{0xfe, 0xff}) {
		return errors.New("the file is UTF-16 (its byte order mark says so): save it as UTF-8")
	}
	return nil
}

// syntaxError drops hujson's package prefix from a parse error, which
// already says "line N, column M", and says plainly what a second value
// after the object is.
func syntaxError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "hujson: ")
	if where, _, ok := strings.Cut(msg, ": "); ok && strings.HasSuffix(msg, "after top-level value") {
		return fmt.Errorf("data after the JSON object, at %s", where)
	}
	return errors.New(msg)
}

// memberName is the decoded name of an object member.
func memberName(m hujson.ObjectMember) string {
	if lit, ok := m.Name.Value.(hujson.Literal); ok {
		return lit.String()
	}
	return ""
}

// find returns the member of obj named name, or nil.
func find(obj *hujson.Object, name string) *hujson.ObjectMember {
	for i := range obj.Members {
		if memberName(obj.Members[i]) == name {
			return &obj.Members[i]
		}
	}
	return nil
}

// layout is how the members of one object sit in the file, so that a
// member Merge adds sits as its neighbours do.
type layout struct {
	compact bool   // all on one line: `{"a": 1, "b": 2}`
	indent  string // of each member's line
	close   string // of the closing brace's line
	unit    string // one level of indentation in this file
	eol     string
}

// lineIndent is the indentation of the line extra ends on: the spaces and
// tabs after its last line feed; ok is false when extra has no line feed.
func lineIndent(extra []byte) (indent string, ok bool) {
	i := bytes.LastIndexByte(extra, '\n')
	if i < 0 {
		return "", false
	}
	rest := extra[i+1:]
	n := 0
	for n < len(rest) && (rest[n] == ' ' || rest[n] == '\t') {
		n++
	}
	return string(rest[:n]), true
}

// indentUnit is one level of the file's indentation, read off its first
// indented top-level member; two spaces when nothing says.
func indentUnit(top *hujson.Object) string {
	for _, m := range top.Members {
		if ind, ok := lineIndent(m.Name.BeforeExtra); ok && ind != "" {
			return ind
		}
	}
	return "  "
}

// layoutOf is the layout of obj, whose key's line is indented by parent;
// an empty object takes the layout its parent's members have.
func layoutOf(obj *hujson.Object, parent, unit, eol string, parentCompact bool) layout {
	l := layout{compact: parentCompact, indent: parent + unit, close: parent, unit: unit, eol: eol}
	if len(obj.Members) == 0 {
		if bytes.IndexByte(obj.AfterExtra, '\n') >= 0 {
			l.compact = false
		}
		return l
	}
	l.compact = true
	for _, m := range obj.Members {
		if ind, ok := lineIndent(m.Name.BeforeExtra); ok {
			l.compact = false
			l.indent = ind
		}
	}
	if bytes.IndexByte(obj.AfterExtra, '\n') >= 0 {
		l.compact = false
	}
	return l
}

// appendMember adds name: val as obj's last member, laid out as l says: on
// a line of its own after any comment on the old last member's line, the
// closing brace staying on its own line (or getting one); a trailing comma
// stays trailing.
func appendMember(obj *hujson.Object, name string, val hujson.ValueTrimmed, l layout) {
	m := hujson.ObjectMember{
		Name:  hujson.Value{Value: hujson.String(name)},
		Value: hujson.Value{BeforeExtra: hujson.Extra(" "), Value: val},
	}
	n := len(obj.Members)
	if n > 0 && obj.Members[n-1].Value.AfterExtra != nil {
		m.Value.AfterExtra = hujson.Extra{} // the trailing comma moves to the new last member
	}
	tail := bytes.Clone(obj.AfterExtra)
	if l.compact {
		if n > 0 {
			m.Name.BeforeExtra = hujson.Extra(" ")
		}
		obj.Members = append(obj.Members, m)
		return
	}
	same, rest := splitFirstLine(tail)
	before := bytes.Clone(same)
	endsLine := bytes.HasSuffix(before, []byte("\n"))
	if !endsLine {
		before = append(before, l.eol...)
	}
	m.Name.BeforeExtra = append(before, l.indent...)
	switch {
	case bytes.HasPrefix(rest, []byte("\n")) || bytes.HasPrefix(rest, []byte("\r\n")):
		// The closing brace (or a comment) was already on a line below.
	case endsLine:
		rest = append([]byte(l.eol), rest...)
	default:
		// The closing brace shared the last member's line.
		rest = append([]byte(l.eol+l.close), bytes.TrimLeft(rest, " \t")...)
	}
	obj.AfterExtra = rest
	obj.Members = append(obj.Members, m)
}

// splitFirstLine splits the whitespace and comments after an object's last
// member into what is on that member's line (its trailing comments, a line
// comment with its line feed) and the rest, which starts at the line break
// (or on the next line, after a line comment).
func splitFirstLine(b []byte) (same, rest []byte) {
	for i := 0; i < len(b); {
		switch {
		case b[i] == '\n':
			j := i
			if j > 0 && b[j-1] == '\r' {
				j--
			}
			return b[:j], b[j:]
		case b[i] == ' ' || b[i] == '\t' || b[i] == '\r':
			i++
		case bytes.HasPrefix(b[i:], []byte("//")):
			k := bytes.IndexByte(b[i:], '\n')
			if k < 0 {
				return b, nil
			}
			return b[:i+k+1], b[i+k+1:]
		case bytes.HasPrefix(b[i:], []byte("/*")):
			k := bytes.Index(b[i+2:], []byte("*/"))
			if k < 0 {
				return b, nil
			}
			i += 2 + k + 2
		default:
			return b, nil
		}
	}
	return b, nil
}
