package lang

import (
	"strings"

	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// functions is the function table of every evaluation: the go-cty standard
// library under the names terraform uses, plus try and can. There is
// deliberately no file, env, timestamp, uuid or anything else that reads
// the machine or the network: one mcp.hcl must give one lock everywhere.
// The functions whose result can outgrow their arguments are bounded
// (bounds.go).
var functions = map[string]function.Function{
	"abs":             stdlib.AbsoluteFunc,
	"can":             tryfunc.CanFunc,
	"ceil":            stdlib.CeilFunc,
	"chomp":           stdlib.ChompFunc,
	"chunklist":       boundedChunklist,
	"coalesce":        stdlib.CoalesceFunc,
	"coalescelist":    stdlib.CoalesceListFunc,
	"compact":         stdlib.CompactFunc,
	"concat":          boundedConcat,
	"contains":        stdlib.ContainsFunc,
	"csvdecode":       stdlib.CSVDecodeFunc,
	"distinct":        stdlib.DistinctFunc,
	"element":         stdlib.ElementFunc,
	"endswith":        endsWithFunc,
	"flatten":         boundedFlatten,
	"floor":           stdlib.FloorFunc,
	"format":          boundedFormat,
	"formatdate":      stdlib.FormatDateFunc,
	"formatlist":      boundedFormatList,
	"indent":          boundedIndent,
	"index":           stdlib.IndexFunc,
	"join":            boundedJoin,
	"jsondecode":      boundedJSONDecode,
	"jsonencode":      boundedJSONEncode,
	"keys":            stdlib.KeysFunc,
	"length":          lengthFunc,
	"log":             stdlib.LogFunc,
	"lookup":          stdlib.LookupFunc,
	"lower":           stdlib.LowerFunc,
	"max":             stdlib.MaxFunc,
	"merge":           boundedMerge,
	"min":             stdlib.MinFunc,
	"parseint":        stdlib.ParseIntFunc,
	"pow":             stdlib.PowFunc,
	"range":           stdlib.RangeFunc,
	"regex":           stdlib.RegexFunc,
	"regexall":        boundedRegexAll,
	"regexreplace":    boundedRegexReplace,
	"replace":         boundedReplace,
	"reverse":         stdlib.ReverseListFunc,
	"setintersection": stdlib.SetIntersectionFunc,
	"setproduct":      boundedSetProduct,
	"setsubtract":     stdlib.SetSubtractFunc,
	"setunion":        boundedSetUnion,
	"signum":          stdlib.SignumFunc,
	"slice":           stdlib.SliceFunc,
	"sort":            stdlib.SortFunc,
	"split":           boundedSplit,
	"startswith":      startsWithFunc,
	"strcontains":     strContainsFunc,
	"strlen":          stdlib.StrlenFunc,
	"strrev":          stdlib.ReverseFunc,
	"substr":          stdlib.SubstrFunc,
	"timeadd":         stdlib.TimeAddFunc,
	"title":           stdlib.TitleFunc,
	"tobool":          stdlib.MakeToFunc(cty.Bool),
	"tolist":          stdlib.MakeToFunc(cty.List(cty.DynamicPseudoType)),
	"tomap":           stdlib.MakeToFunc(cty.Map(cty.DynamicPseudoType)),
	"tonumber":        stdlib.MakeToFunc(cty.Number),
	"toset":           stdlib.MakeToFunc(cty.Set(cty.DynamicPseudoType)),
	"tostring":        stdlib.MakeToFunc(cty.String),
	"trim":            stdlib.TrimFunc,
	"trimprefix":      stdlib.TrimPrefixFunc,
	"trimspace":       stdlib.TrimSpaceFunc,
	"trimsuffix":      stdlib.TrimSuffixFunc,
	"try":             tryfunc.TryFunc,
	"upper":           stdlib.UpperFunc,
	"values":          stdlib.ValuesFunc,
	"zipmap":          stdlib.ZipmapFunc,
}

func stringPredicate(f func(s, sub string) bool) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "str", Type: cty.String}, {Name: "substr", Type: cty.String}},
		Type:   function.StaticReturnType(cty.Bool),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			return cty.BoolVal(f(args[0].AsString(), args[1].AsString())), nil
		},
	})
}

var (
	startsWithFunc  = stringPredicate(strings.HasPrefix)
	endsWithFunc    = stringPredicate(strings.HasSuffix)
	strContainsFunc = stringPredicate(strings.Contains)
)

// lengthFunc is terraform's length: of a string (in characters) as well as
// of a collection. cty's LengthFunc takes only collections.
var lengthFunc = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "value", Type: cty.DynamicPseudoType, AllowDynamicType: true, AllowUnknown: true}},
	Type: func(args []cty.Value) (cty.Type, error) {
		if args[0].Type().Equals(cty.String) {
			return cty.Number, nil
		}
		return stdlib.LengthFunc.ReturnTypeForValues(args)
	},
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		if args[0].Type().Equals(cty.String) {
			return stdlib.Strlen(args[0])
		}
		return stdlib.Length(args[0])
	},
})
