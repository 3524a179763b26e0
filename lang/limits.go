package lang

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	hcljson "github.com/hashicorp/hcl/v2/json"
)

// Limits on what a configuration may ask of mcpform. mcp.hcl, its modules
// and its variable files are untrusted input (a module comes from someone
// else's repository): whatever they say, validate, plan and fmt answer with
// a diagnostic, never a crash or an unbounded allocation. Each limit is far
// above any real configuration (docs/GUARANTEES.md).
const (
	// MaxNesting is how deeply a file may nest. HCL's parser and evaluator
	// recurse once per level, about 16 KiB of stack each for brackets:
	// 70,000 levels overflow Go's stack, 500 need about 8 MiB.
	MaxNesting = 500

	// MaxFileBytes is the size of the largest file Load, Format and a
	// -var or MCPFORM_VAR_ value may be: 1 MiB, fifty times a large
	// configuration. Lexing costs about 100 bytes of memory per byte.
	MaxFileBytes = 1 << 20

	// MaxElements is the most elements a function may return in one
	// collection (or, for flatten, in all its levels).
	MaxElements = 100_000

	// MaxStringBytes is the longest string a function may return.
	MaxStringBytes = 1 << 20
)

// readLimited reads at most MaxFileBytes+1 bytes of name: enough to know
// that a file is too large without reading the rest (mcp.hcl could be a
// link to /dev/zero).
func readLimited(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
}

// syntax is what a scanned text is: which parser will read it.
type syntax uint8

const (
	syntaxConfig     syntax = iota // an HCL file: mcp.hcl, a module file, a .tfvars-style -var-file
	syntaxExpression               // one HCL expression: a -var or MCPFORM_VAR_ value
	syntaxJSON                     // a JSON -var-file
)

// parseConfig is hclsyntax.ParseConfig behind the size and nesting limits.
// Every HCL file lang reads goes through it (or parseJSON).
func parseConfig(src []byte, filename string) (*hcl.File, hcl.Diagnostics) {
	if diags := checkSource(src, filename, syntaxConfig); diags != nil {
		return nil, diags
	}
	return hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
}

// parseExpression is hclsyntax.ParseExpression behind the same limits.
func parseExpression(src []byte, filename string) (hcl.Expression, hcl.Diagnostics) {
	if diags := checkSource(src, filename, syntaxExpression); diags != nil {
		return nil, diags
	}
	return hclsyntax.ParseExpression(src, filename, hcl.InitialPos)
}

// parseJSON is hcl's JSON parser behind the same limits: it recurses too.
func parseJSON(src []byte, filename string) (*hcl.File, hcl.Diagnostics) {
	if diags := checkSource(src, filename, syntaxJSON); diags != nil {
		return nil, diags
	}
	return hcljson.Parse(src, filename)
}

// checkSource refuses a text that is too large or nests too deeply, before
// any parser sees it.
func checkSource(src []byte, filename string, s syntax) hcl.Diagnostics {
	if len(src) > MaxFileBytes {
		return hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "File too large",
			Detail:   fmt.Sprintf("%s is more than %d bytes (1 MiB), the most mcpform reads from one file. Split it: a configuration directory may hold any number of *%s files, and modules hold the rest.", filename, MaxFileBytes, configSuffix),
			Subject:  &hcl.Range{Filename: filename, Start: hcl.InitialPos, End: hcl.InitialPos},
		}}
	}
	off, ok := scanNesting(src, s, MaxNesting)
	if ok {
		return nil
	}
	start := posAt(src, off)
	end := start
	if off < len(src) {
		end = hcl.Pos{Line: start.Line, Column: start.Column + 1, Byte: off + 1}
	}
	return hcl.Diagnostics{{
		Severity: hcl.DiagError,
		Summary:  "Nesting too deep",
		Detail:   fmt.Sprintf("This is nested more than %d levels deep, the most mcpform reads: every bracket, brace, parenthesis, template (\"...\", heredoc) interpolation or %%{if}/%%{for} directive opens a level, and every operator chained in one expression adds one. The limit keeps a hostile file from exhausting the parser's stack; no real configuration comes near it. Split the expression into local values.", MaxNesting),
		Subject:  &hcl.Range{Filename: filename, Start: start, End: end},
	}}
}

// posAt is the position of byte off of src: line and column count from 1,
// columns in characters.
func posAt(src []byte, off int) hcl.Pos {
	before := src[:off]
	line := 1 + bytes.Count(before, []byte{'\n'})
	lineStart := bytes.LastIndexByte(before, '\n') + 1
	return hcl.Pos{Line: line, Column: 1 + utf8.RuneCount(before[lineStart:]), Byte: off}
}

// frameKind is what a nesting level is.
type frameKind uint8

const (
	frameBody    frameKind = iota // a file's top level: a newline ends an item
	frameExpr                     // a bare expression's top level: newlines do not end anything
	frameBrace                    // { }: an object or a block body; a newline ends an item
	frameFor                      // {for ...}: newlines do not end anything
	frameBracket                  // [ ]
	frameParen                    // ( )
	frameInterp                   // ${ } or %{ }: an expression inside a template
	frameQuoted                   // "...": a template
	frameHeredoc                  // <<EOT ... EOT: a template
)

// frame is one nesting level of scanNesting.
type frame struct {
	kind frameKind
	// base is the depth of the frame's contents; ops counts the operators
	// (and opening brackets, as in x[a][b]) since the last comma or
	// newline, because a chain a+b+c nests as deeply in the parser and
	// evaluator as (((a)+b)+c) does; ctrl counts the open %{if} and
	// %{for} of a template, which nest in the template parser.
	base, ops, ctrl int
	// ctrlDelta is, for a %{ } frame, what its directive does to the
	// template's ctrl when it closes: +1 (if, for), -1 (endif, endfor).
	ctrlDelta int
	start     int // offset of the opening byte, for the diagnostic
	// A heredoc's closing marker, where its current line starts and
	// whether an interpolation has begun on that line (then the line
	// cannot close it).
	marker      []byte
	lineStart   int
	startOfLine bool
}

func (f *frame) depth() int { return f.base + f.ops + f.ctrl }

func (f *frame) isTemplate() bool { return f.kind == frameQuoted || f.kind == frameHeredoc }

// scanNesting reports the offset at which src first nests more than limit
// levels deep, as HCL's parser (or, for syntaxJSON, hcl's JSON parser)
// would nest reading it, and false; or true when it never does. It mirrors
// hclsyntax's lexer in what is a string, a heredoc or a comment (so that
// nothing there is counted and nothing counted is hidden there) and counts
// generously everywhere else: it may report a depth above the parser's,
// never below (FuzzNesting checks this against the lexer's tokens). It
// runs in time linear in len(src) and allocates only its stack of levels.
func scanNesting(src []byte, s syntax, limit int) (int, bool) {
	if s == syntaxJSON {
		return scanJSONNesting(src, limit)
	}
	bom := 0
	if bytes.HasPrefix(src, []byte("\xef\xbb\xbf")) { // the lexer skips a BOM
		bom, src = 3, src[3:]
	}
	sc := &nestScanner{src: src, limit: limit, noCommentEnd: len(src) + 1}
	root := frameBody
	if s == syntaxExpression {
		root = frameExpr
	}
	sc.stack = append(sc.stack, frame{kind: root})
	if !sc.run() {
		return bom + sc.at, false
	}
	if sc.nonASCII {
		// hclsyntax's identifier tables let some non-ASCII bytes take the
		// byte after them, whatever it is ("\xd3\"" is one identifier,
		// not the start of a string): where code holds a non-ASCII byte,
		// only the lexer knows what follows, so ask it.
		lex := hclsyntax.LexConfig
		if s == syntaxExpression {
			lex = hclsyntax.LexExpression
		}
		toks, _ := lex(src, "", hcl.Pos{Line: 1, Column: 1, Byte: bom})
		if depth, at := tokenNesting(toks, s, limit); depth > limit {
			return at, false
		}
	}
	return 0, true
}

type nestScanner struct {
	src   []byte
	limit int
	stack []frame
	at    int // where the limit was passed
	// nonASCII is set when code (not a string or comment) holds a
	// non-ASCII byte: the lexer decides the rest.
	nonASCII bool
	// noCommentEnd is the smallest offset from which no "*/" follows, once
	// a search has found none: unterminated /* are not searched again.
	noCommentEnd int
}

func (sc *nestScanner) top() *frame { return &sc.stack[len(sc.stack)-1] }

// push opens a level at offset at; it reports false when that passes the
// limit.
func (sc *nestScanner) push(kind frameKind, at int) bool {
	parent := sc.top()
	f := frame{kind: kind, base: parent.depth() + 1, start: at}
	if !parent.isTemplate() && kind != frameQuoted && kind != frameHeredoc {
		parent.ops++ // x[a][b], f(a)(b): each one wraps the last
	}
	if parent.kind == frameHeredoc {
		parent.startOfLine = false
	}
	sc.stack = append(sc.stack, f)
	if f.base > sc.limit || parent.depth() > sc.limit {
		sc.at = at
		return false
	}
	return true
}

// op counts an operator at offset at.
func (sc *nestScanner) op(at int) bool {
	f := sc.top()
	f.ops++
	if f.depth() > sc.limit {
		sc.at = at
		return false
	}
	return true
}

// pop closes the top level; a %{ } applies its directive to its template.
func (sc *nestScanner) pop() bool {
	f := sc.stack[len(sc.stack)-1]
	sc.stack = sc.stack[:len(sc.stack)-1]
	if f.kind == frameInterp && f.ctrlDelta != 0 {
		t := sc.top()
		t.ctrl = max(t.ctrl+f.ctrlDelta, 0)
		if t.depth() > sc.limit {
			sc.at = f.start
			return false
		}
	}
	return true
}

func (sc *nestScanner) run() bool {
	src := sc.src
	for i := 0; i < len(src); {
		f := sc.top()
		switch f.kind {
		case frameQuoted, frameHeredoc:
			next, ok := sc.template(i)
			if !ok {
				return false
			}
			i = next
		default:
			next, ok := sc.code(i)
			if !ok {
				return false
			}
			i = next
		}
	}
	return true
}

// code scans one token of an expression or body at i and returns where the
// next begins.
func (sc *nestScanner) code(i int) (int, bool) {
	src := sc.src
	c := src[i]
	switch {
	case c == '\n':
		if k := sc.top().kind; k == frameBody || k == frameBrace {
			sc.top().ops = 0
		}
		return i + 1, true
	case c == ',':
		sc.top().ops = 0
		return i + 1, true
	case c == '#' || (c == '/' && i+1 < len(src) && src[i+1] == '/'):
		return lineEnd(src, i), true // the newline itself ends an item
	case c == '/' && i+1 < len(src) && src[i+1] == '*':
		if end, ok := sc.commentEnd(i); ok {
			return end, true
		}
		// An unterminated /* is not a comment to the lexer but / and *.
		return i + 1, sc.op(i)
	case c == '"':
		return i + 1, sc.push(frameQuoted, i)
	case c == '<' && i+1 < len(src) && src[i+1] == '<':
		if marker, body, ok := heredocStart(src, i); ok {
			if !sc.push(frameHeredoc, i) {
				return 0, false
			}
			h := sc.top()
			h.marker, h.lineStart, h.startOfLine = marker, body, true
			return body, true
		}
		return i + 1, sc.op(i)
	case c == '{':
		kind := frameBrace
		if sc.opensFor(i + 1) {
			kind = frameFor
		}
		return i + 1, sc.push(kind, i)
	case c == '[':
		return i + 1, sc.push(frameBracket, i)
	case c == '(':
		return i + 1, sc.push(frameParen, i)
	case c == ']' || c == ')':
		want := frameBracket
		if c == ')' {
			want = frameParen
		}
		if sc.top().kind == want {
			return i + 1, sc.pop()
		}
		return i + 1, true // a stray closer: the parser reports it
	case c == '}':
		// The lexer pairs braces only with braces: } closes the innermost
		// { or ${ (ending the template's interpolation), whatever [ or (
		// are still open inside it.
		for j := len(sc.stack) - 1; j > 0; j-- {
			k := sc.stack[j].kind
			if k == frameBrace || k == frameFor || k == frameInterp {
				for len(sc.stack) > j+1 {
					sc.stack = sc.stack[:len(sc.stack)-1]
				}
				return i + 1, sc.pop()
			}
			if k != frameBracket && k != frameParen {
				break
			}
		}
		return i + 1, true
	case isOperator(c):
		return i + 1, sc.op(i)
	case c >= 0x80:
		sc.nonASCII = true
		return len(src), true
	case c == '_' || isASCIILetter(c):
		// An identifier may hold '-' (my-server): it is not a minus.
		j := i + 1
		for j < len(src) && isASCIIIdentByte(src[j]) {
			j++
		}
		return j, true
	}
	return i + 1, true
}

// template scans a template's text at i: a quoted string or a heredoc.
func (sc *nestScanner) template(i int) (int, bool) {
	src := sc.src
	f := sc.top()
	c := src[i]
	switch {
	case c == '"' && f.kind == frameQuoted:
		return i + 1, sc.pop()
	case c == '\\' && f.kind == frameQuoted:
		if i+1 < len(src) && src[i+1] != '\n' && src[i+1] != '\r' {
			return i + 2, true
		}
		return i + 1, true
	case c == '$' || c == '%':
		if i+2 < len(src) && src[i+1] == c && src[i+2] == '{' {
			return i + 3, true // $${ and %%{ are literal
		}
		if i+1 < len(src) && src[i+1] == '{' {
			delta := 0
			if c == '%' {
				delta = directiveDelta(src, i+2)
			}
			if !sc.push(frameInterp, i) {
				return 0, false
			}
			sc.top().ctrlDelta = delta
			return i + 2, true
		}
		return i + 1, true
	case c == '\n' && f.kind == frameHeredoc:
		if f.startOfLine && bytes.Equal(bytes.TrimSpace(src[f.lineStart:i+1]), f.marker) {
			// The closing marker; its newline belongs to the code after.
			return i, sc.pop()
		}
		f.lineStart, f.startOfLine = i+1, true
		return i + 1, true
	}
	return i + 1, true
}

// commentEnd returns the offset after the "*/" that closes the comment
// opening at i.
func (sc *nestScanner) commentEnd(i int) (int, bool) {
	if i+2 >= sc.noCommentEnd {
		return 0, false
	}
	n := bytes.Index(sc.src[i+2:], []byte("*/"))
	if n < 0 {
		sc.noCommentEnd = i + 2
		return 0, false
	}
	return i + 2 + n + 2, true
}

// opensFor reports whether the object constructor whose contents start at
// i is a for expression, which (unlike an object) reads across newlines.
// In doubt it says yes: that only counts more.
func (sc *nestScanner) opensFor(i int) bool {
	src := sc.src
	for i < len(src) {
		switch c := src[i]; {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			i++
		case c == '#' || (c == '/' && i+1 < len(src) && src[i+1] == '/'):
			i = lineEnd(src, i)
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end, ok := sc.commentEnd(i)
			if !ok {
				return false
			}
			i = end
		default:
			return bytes.HasPrefix(src[i:], []byte("for")) && (i+3 == len(src) || !isASCIIIdentByte(src[i+3]))
		}
	}
	return false
}

// directiveDelta is what the template directive whose contents start at i
// does to the nesting of its template: %{if} and %{for} open a level,
// %{endif} and %{endfor} close one, %{else} neither. Anything else counts
// as opening one.
func directiveDelta(src []byte, i int) int {
	if i < len(src) && src[i] == '~' {
		i++
	}
	for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\r' || src[i] == '\n') {
		i++
	}
	j := i
	for j < len(src) && isASCIIIdentByte(src[j]) {
		j++
	}
	switch string(src[i:j]) {
	case "endif", "endfor":
		return -1
	case "else":
		return 0
	}
	return 1
}

// heredocStart reports whether a heredoc starts at i ("<<EOT" or "<<-EOT"
// and a newline, exactly as the lexer's BeginHeredocTmpl), with its marker
// and the offset its body starts at.
func heredocStart(src []byte, i int) (marker []byte, body int, ok bool) {
	j := i + 2
	if j < len(src) && src[j] == '-' {
		j++
	}
	k := j
	for k < len(src) && isASCIIIdentByte(src[k]) {
		k++
	}
	switch {
	case k < len(src) && src[k] == '\n':
		body = k + 1
	case k+1 < len(src) && src[k] == '\r' && src[k+1] == '\n':
		body = k + 2
	default:
		return nil, 0, false
	}
	if k == j || !hclsyntax.ValidIdentifier(string(src[j:k])) {
		return nil, 0, false
	}
	return src[j:k], body, true
}

// scanJSONNesting is scanNesting for JSON: only [ and { nest.
func scanJSONNesting(src []byte, limit int) (int, bool) {
	var stack []byte
	for i := 0; i < len(src); i++ {
		switch c := src[i]; c {
		case '"':
			for i++; i < len(src) && src[i] != '"'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
		case '[', '{':
			stack = append(stack, c)
			if len(stack) > limit {
				return i, false
			}
		case ']', '}':
			if n := len(stack); n > 0 && stack[n-1] == c-2 { // '['+2 == ']', '{'+2 == '}'
				stack = stack[:n-1]
			}
		}
	}
	return 0, true
}

func lineEnd(src []byte, i int) int {
	if n := bytes.IndexByte(src[i:], '\n'); n >= 0 {
		return i + n
	}
	return len(src)
}

func isOperator(c byte) bool {
	switch c {
	case '+', '-', '*', '/', '%', '!', '<', '>', '=', '&', '|', '?', '.':
		return true
	}
	return false
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isASCIIIdentByte(c byte) bool {
	return isASCIILetter(c) || (c >= '0' && c <= '9') || c == '_' || c == '-'
}

// tokenNesting is scanNesting's rules applied to the lexer's tokens: the
// deepest nesting of toks and the offset where it is first reached,
// stopping once it passes limit (unless limit is negative).
func tokenNesting(toks hclsyntax.Tokens, s syntax, limit int) (int, int) {
	root := frameBody
	if s == syntaxExpression {
		root = frameExpr
	}
	stack := []frame{{kind: root}}
	top := func() *frame { return &stack[len(stack)-1] }
	deepest, at := 0, 0
	note := func(d, off int) {
		if d > deepest {
			deepest, at = d, off
		}
	}
	push := func(kind frameKind, off int) {
		parent := top()
		f := frame{kind: kind, base: parent.depth() + 1, start: off}
		if !parent.isTemplate() && kind != frameQuoted && kind != frameHeredoc {
			parent.ops++
		}
		stack = append(stack, f)
		note(f.base, off)
		note(parent.depth(), off)
	}
	pop := func() {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if f.kind == frameInterp && f.ctrlDelta != 0 {
			t := top()
			t.ctrl = max(t.ctrl+f.ctrlDelta, 0)
			note(t.depth(), f.start)
		}
	}
	for i, tok := range toks {
		if limit >= 0 && deepest > limit {
			break
		}
		off := tok.Range.Start.Byte
		switch tok.Type {
		case hclsyntax.TokenNewline:
			if k := top().kind; k == frameBody || k == frameBrace {
				top().ops = 0
			}
		case hclsyntax.TokenComment:
			if k := top().kind; bytes.HasSuffix(tok.Bytes, []byte("\n")) && (k == frameBody || k == frameBrace) {
				top().ops = 0
			}
		case hclsyntax.TokenComma:
			top().ops = 0
		case hclsyntax.TokenOQuote:
			push(frameQuoted, off)
		case hclsyntax.TokenOHeredoc:
			push(frameHeredoc, off)
		case hclsyntax.TokenTemplateInterp, hclsyntax.TokenTemplateControl:
			push(frameInterp, off)
			if tok.Type == hclsyntax.TokenTemplateControl {
				top().ctrlDelta = 1
				if i+1 < len(toks) && toks[i+1].Type == hclsyntax.TokenIdent {
					switch string(toks[i+1].Bytes) {
					case "endif", "endfor":
						top().ctrlDelta = -1
					case "else":
						top().ctrlDelta = 0
					}
				}
			}
		case hclsyntax.TokenOBrace:
			kind := frameBrace
			for _, next := range toks[i+1:] {
				if next.Type == hclsyntax.TokenNewline || next.Type == hclsyntax.TokenComment {
					continue
				}
				if next.Type == hclsyntax.TokenIdent && string(next.Bytes) == "for" {
					kind = frameFor
				}
				break
			}
			push(kind, off)
		case hclsyntax.TokenOBrack:
			push(frameBracket, off)
		case hclsyntax.TokenOParen:
			push(frameParen, off)
		case hclsyntax.TokenCBrack, hclsyntax.TokenCParen:
			want := frameBracket
			if tok.Type == hclsyntax.TokenCParen {
				want = frameParen
			}
			if top().kind == want {
				pop()
			}
		case hclsyntax.TokenCBrace, hclsyntax.TokenTemplateSeqEnd:
			for j := len(stack) - 1; j > 0; j-- {
				k := stack[j].kind
				if k == frameBrace || k == frameFor || k == frameInterp {
					stack = stack[:j+1]
					pop()
					break
				}
				if k != frameBracket && k != frameParen {
					break
				}
			}
		case hclsyntax.TokenCQuote, hclsyntax.TokenCHeredoc:
			if top().isTemplate() {
				pop()
			}
		case hclsyntax.TokenPlus, hclsyntax.TokenMinus, hclsyntax.TokenStar, hclsyntax.TokenSlash,
			hclsyntax.TokenPercent, hclsyntax.TokenBang, hclsyntax.TokenLessThan, hclsyntax.TokenGreaterThan,
			hclsyntax.TokenEqual, hclsyntax.TokenEqualOp, hclsyntax.TokenNotEqual, hclsyntax.TokenLessThanEq,
			hclsyntax.TokenGreaterThanEq, hclsyntax.TokenAnd, hclsyntax.TokenOr, hclsyntax.TokenQuestion,
			hclsyntax.TokenDot, hclsyntax.TokenEllipsis, hclsyntax.TokenFatArrow:
			top().ops++
			note(top().depth(), off)
		}
	}
	return deepest, at
}
