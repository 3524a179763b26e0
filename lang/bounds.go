package lang

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// The functions of mcp.hcl whose result can be far larger than their
// arguments (setproduct of three ranges is 10^8 tuples; indent(1e9, "a\nb")
// is a gigabyte) are the standard ones behind a check that computes the
// size of the result from the arguments, and refuses the call before
// anything is allocated: at most MaxElements elements in a collection,
// MaxStringBytes bytes in a string. The others return at most what they
// are given (range is already capped at 1024 elements by go-cty).
var (
	boundedSetProduct   = bounded(stdlib.SetProductFunc, checkSetProduct)
	boundedConcat       = bounded(stdlib.ConcatFunc, checkSumOfLengths)
	boundedSetUnion     = bounded(stdlib.SetUnionFunc, checkSumOfLengths)
	boundedMerge        = bounded(stdlib.MergeFunc, checkSumOfLengths)
	boundedFlatten      = bounded(stdlib.FlattenFunc, checkFlatten)
	boundedChunklist    = bounded(stdlib.ChunklistFunc, checkChunklist)
	boundedSplit        = bounded(stdlib.SplitFunc, checkSplit)
	boundedRegexAll     = bounded(stdlib.RegexAllFunc, checkRegexAll)
	boundedIndent       = bounded(stdlib.IndentFunc, checkIndent)
	boundedJoin         = bounded(stdlib.JoinFunc, checkJoin)
	boundedFormat       = bounded(stdlib.FormatFunc, checkFormat)
	boundedFormatList   = bounded(stdlib.FormatListFunc, checkFormatList)
	boundedReplace      = bounded(stdlib.ReplaceFunc, checkReplace)
	boundedRegexReplace = bounded(stdlib.RegexReplaceFunc, checkRegexReplace)
	boundedJSONEncode   = bounded(stdlib.JSONEncodeFunc, checkJSONEncode)
	boundedJSONDecode   = bounded(stdlib.JSONDecodeFunc, checkJSONDecode)
)

// bounded returns f with check run on its arguments first: in its type
// function, which go-cty runs before the implementation and which, for
// jsondecode, already decodes. Unknown or null arguments are left to f:
// they make no large result.
func bounded(f function.Function, check func(args []cty.Value) error) function.Function {
	return function.New(&function.Spec{
		Description: f.Description(),
		Params:      f.Params(),
		VarParam:    f.VarParam(),
		Type: func(args []cty.Value) (cty.Type, error) {
			plain := make([]cty.Value, len(args))
			for i, a := range args {
				a, _ = a.UnmarkDeep()
				if !a.IsWhollyKnown() || a.IsNull() {
					return f.ReturnTypeForValues(args)
				}
				plain[i] = a
			}
			if err := check(plain); err != nil {
				return cty.NilType, err
			}
			return f.ReturnTypeForValues(args)
		},
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			return f.Call(args)
		},
	})
}

func tooManyElements() error {
	return fmt.Errorf("the result would hold more than %d elements, the most mcpform lets one collection hold; use smaller collections", MaxElements)
}

func tooManyBytes() error {
	return fmt.Errorf("the result would be longer than %d bytes (1 MiB), the longest string mcpform lets a function make; use shorter strings", MaxStringBytes)
}

// length is the number of elements of a collection, or 0 for anything
// else.
func length(v cty.Value) int {
	if v.CanIterateElements() {
		return v.LengthInt()
	}
	return 0
}

func checkSetProduct(args []cty.Value) error {
	n := 1
	for _, a := range args {
		l := length(a)
		if l == 0 {
			return nil
		}
		if n > MaxElements/l {
			return tooManyElements()
		}
		n *= l
	}
	return nil
}

func checkSumOfLengths(args []cty.Value) error {
	n := 0
	for _, a := range args {
		if n += length(a); n > MaxElements {
			return tooManyElements()
		}
	}
	return nil
}

// checkFlatten counts the elements of every level, stopping at the limit:
// a list may hold the same large list many times over.
func checkFlatten(args []cty.Value) error {
	n := 0
	var count func(v cty.Value) bool
	count = func(v cty.Value) bool {
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			if n++; n > MaxElements {
				return false
			}
			if ty := e.Type(); e.IsKnown() && !e.IsNull() && (ty.IsListType() || ty.IsSetType() || ty.IsTupleType()) && !count(e) {
				return false
			}
		}
		return true
	}
	if !count(args[0]) {
		return tooManyElements()
	}
	return nil
}

func checkChunklist(args []cty.Value) error {
	size, _ := args[1].AsBigFloat().Int64()
	if size <= 0 {
		return nil // go-cty refuses it
	}
	if int64(length(args[0]))/size > MaxElements {
		return tooManyElements()
	}
	return nil
}

func checkSplit(args []cty.Value) error {
	sep, str := args[0].AsString(), args[1].AsString()
	n := utf8.RuneCountInString(str)
	if sep != "" {
		n = strings.Count(str, sep) + 1
	}
	if n > MaxElements {
		return tooManyElements()
	}
	return nil
}

func checkRegexAll(args []cty.Value) error {
	re, err := regexp.Compile(args[0].AsString())
	if err != nil {
		return nil // go-cty reports it
	}
	if len(re.FindAllStringIndex(args[1].AsString(), MaxElements+1)) > MaxElements {
		return tooManyElements()
	}
	return nil
}

func checkIndent(args []cty.Value) error {
	spaces, _ := args[0].AsBigFloat().Int64()
	str := args[1].AsString()
	if spaces <= 0 {
		return nil
	}
	lines := int64(strings.Count(str, "\n"))
	if lines > 0 && spaces > (MaxStringBytes-int64(len(str)))/lines {
		return tooManyBytes()
	}
	return nil
}

func checkJoin(args []cty.Value) error {
	sep := len(args[0].AsString())
	n := 0
	for _, list := range args[1:] {
		for it := list.ElementIterator(); it.Next(); {
			_, e := it.Element()
			if e.IsKnown() && !e.IsNull() && e.Type() == cty.String {
				n += len(e.AsString())
			}
			if n += sep; n > MaxStringBytes+sep {
				return tooManyBytes()
			}
		}
	}
	return nil
}

// formatWidths is the sum of the widths and precisions in a format string
// ("%10.3f"): what the verbs may add beyond their arguments.
func formatWidths(f string) int {
	n := 0
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		for i++; i < len(f) && strings.IndexByte("+- #0.[]123456789", f[i]) >= 0; i++ {
			if f[i] < '1' || f[i] > '9' {
				continue
			}
			w := 0
			for ; i < len(f) && f[i] >= '0' && f[i] <= '9'; i++ {
				if w = w*10 + int(f[i]-'0'); w > MaxStringBytes {
					return MaxStringBytes + 1
				}
			}
			i--
			if n += w; n > MaxStringBytes {
				return n
			}
		}
	}
	return n
}

func checkFormat(args []cty.Value) error {
	f := args[0].AsString()
	n := len(f) + formatWidths(f)
	for _, a := range args[1:] {
		if n += encodedSize(a, MaxStringBytes-n); n > MaxStringBytes {
			return tooManyBytes()
		}
	}
	if n > MaxStringBytes {
		return tooManyBytes()
	}
	return nil
}

// checkFormatList bounds formatlist: one string per element of its list
// arguments, each with every scalar argument in it.
func checkFormatList(args []cty.Value) error {
	f := args[0].AsString()
	rows := 1
	for _, a := range args[1:] {
		if ty := a.Type(); ty.IsListType() || ty.IsTupleType() || ty.IsSetType() {
			rows = max(rows, length(a))
		}
	}
	if rows > MaxElements {
		return tooManyElements()
	}
	per := len(f) + formatWidths(f)
	n := 0
	for _, a := range args[1:] {
		if ty := a.Type(); ty.IsListType() || ty.IsTupleType() || ty.IsSetType() {
			n += encodedSize(a, MaxStringBytes-n)
		} else {
			per += encodedSize(a, MaxStringBytes)
		}
		if n > MaxStringBytes || per > MaxStringBytes {
			return tooManyBytes()
		}
	}
	if rows*per > MaxStringBytes-n {
		return tooManyBytes()
	}
	return nil
}

func checkReplace(args []cty.Value) error {
	str, substr, repl := args[0].AsString(), args[1].AsString(), args[2].AsString()
	matches := utf8.RuneCountInString(str) + 1
	if substr != "" {
		matches = strings.Count(str, substr)
	}
	if grow := len(repl) - len(substr); grow > 0 && matches > 0 && grow > (MaxStringBytes-len(str))/matches {
		return tooManyBytes()
	}
	return nil
}

// checkRegexReplace bounds each match's replacement by the template's
// length plus, for every $ in it, the match itself (no group is longer).
func checkRegexReplace(args []cty.Value) error {
	str, repl := args[0].AsString(), args[2].AsString()
	re, err := regexp.Compile(args[1].AsString())
	if err != nil {
		return nil // go-cty reports it
	}
	refs := strings.Count(repl, "$")
	n := len(str)
	for _, m := range re.FindAllStringIndex(str, -1) {
		if n += len(repl) + refs*(m[1]-m[0]); n > MaxStringBytes {
			return tooManyBytes()
		}
	}
	return nil
}

func checkJSONEncode(args []cty.Value) error {
	if encodedSize(args[0], MaxStringBytes) > MaxStringBytes {
		return tooManyBytes()
	}
	return nil
}

// checkJSONDecode refuses JSON nested more deeply than a file may be:
// go-cty decodes it recursively.
func checkJSONDecode(args []cty.Value) error {
	if _, ok := scanJSONNesting([]byte(args[0].AsString()), MaxNesting); !ok {
		return fmt.Errorf("the JSON is nested more than %d levels deep, the most mcpform reads", MaxNesting)
	}
	return nil
}

// encodedSize is an upper bound of the length of v written as JSON (or by
// format's %v), counted up to just past limit.
func encodedSize(v cty.Value, limit int) int {
	n := 0
	var walk func(v cty.Value) bool
	walk = func(v cty.Value) bool {
		switch {
		case !v.IsKnown() || v.IsNull():
			n += 4
		case v.Type() == cty.String:
			s := v.AsString()
			n += len(s) + 2
			for i := 0; i < len(s) && n <= limit; i++ {
				if c := s[i]; c < 0x20 || c == '<' || c == '>' || c == '&' {
					n += 5 // \u00XX
				} else if c == '"' || c == '\\' {
					n++
				}
			}
		case v.Type() == cty.Number:
			// Written out in full ('f'), 1e100000000 is 10^8 digits: about
			// 0.302 decimal digits per bit of binary exponent.
			exp := v.AsBigFloat().MantExp(nil)
			n += int(float64(max(exp, -exp))*0.302) + 160
		case v.Type() == cty.Bool:
			n += 5
		case v.CanIterateElements():
			n += 2
			for it := v.ElementIterator(); it.Next() && n <= limit; {
				k, e := it.Element()
				n++
				if v.Type().IsMapType() || v.Type().IsObjectType() {
					n += len(k.AsString()) + 3
				}
				if !walk(e) {
					return false
				}
			}
		default:
			n += limit + 1 // a capsule or anything else unforeseen
		}
		return n <= limit
	}
	walk(v)
	return n
}
