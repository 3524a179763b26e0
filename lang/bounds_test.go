package lang

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// evalExpr evaluates src with the function table of mcp.hcl.
func evalExpr(t *testing.T, src string) (cty.Value, hcl.Diagnostics) {
	t.Helper()
	expr, diags := hclsyntax.ParseExpression([]byte(src), "t.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatalf("parse %s: %v", src, diags)
	}
	return expr.Value(&hcl.EvalContext{Functions: functions})
}

const (
	elementsDetail = "the result would hold more than 100000 elements, the most mcpform lets one collection hold; use smaller collections."
	bytesDetail    = "the result would be longer than 1048576 bytes (1 MiB), the longest string mcpform lets a function make; use shorter strings."
)

// TestBoundedFunctions calls each bounded function once past its bound,
// with arguments that are themselves small (the outside suite's
// setproduct asked for 9.6 GB, its indent for 1.9 GiB), and once within.
func TestBoundedFunctions(t *testing.T) {
	big := `[for i in range(1000) : i]`
	for _, tc := range []struct {
		fn, src, detail string
	}{
		{"setproduct", `setproduct(range(1000), range(1000), range(100))`, elementsDetail},
		{"concat", `concat([for i in range(101) : range(1000)]...)`, elementsDetail},
		{"setunion", `setunion([for i in range(101) : range(1000)]...)`, elementsDetail},
		{"merge", `merge([for i in range(101) : {for j in range(1000) : "${i}-${j}" => j}]...)`, elementsDetail},
		{"flatten", `flatten([for i in range(1000) : [for j in range(101) : [j]]])`, elementsDetail},
		{"split", `split("", join("", [for i in range(1000) : format("%101s", "")]))`, elementsDetail},
		{"regexall", `regexall("", join("", [for i in range(1000) : format("%101s", "")]))`, elementsDetail},
		{"indent", `indent(1000000000, "a\nb")`, bytesDetail},
		{"join", `join(format("%1050s", ""), ` + big + `)`, bytesDetail},
		{"format", `format("%1048577s", "")`, bytesDetail},
		{"format", `format("%s%s", format("%1000000s", ""), format("%48577s", ""))`, bytesDetail},
		{"formatlist", `formatlist("%1049s", ` + big + `)`, bytesDetail},
		{"replace", `replace(format("%1000s", ""), " ", format("%1049s", ""))`, bytesDetail},
		{"regexreplace", `regexreplace(format("%1000s", ""), " ", "` + strings.Repeat("$0", 525) + `")`, bytesDetail},
		{"jsonencode", `jsonencode([for i in range(1000) : format("%1049s", "")])`, bytesDetail},
		{"jsonencode", `jsonencode(1e100000000)`, bytesDetail},
		{"jsondecode", `jsondecode(join("", [for i in range(501) : "["]))`, "the JSON is nested more than 500 levels deep, the most mcpform reads."},
	} {
		t.Run(tc.fn, func(t *testing.T) {
			_, diags := evalExpr(t, tc.src)
			if len(diags) != 1 {
				t.Fatalf("%s: want one diagnostic, got %v", tc.src, diags)
			}
			want := `Call to function "` + tc.fn + `" failed: ` + tc.detail
			if d := diags[0]; d.Summary != "Error in function call" || d.Detail != want {
				t.Errorf("%s:\n got %q: %q\nwant %q: %q", tc.src, d.Summary, d.Detail, "Error in function call", want)
			}
		})
	}
}

// TestBoundedChunklist: no other function makes a list long enough for
// chunklist to pass the bound, so the list is made here.
func TestBoundedChunklist(t *testing.T) {
	elems := make([]cty.Value, MaxElements+1)
	for i := range elems {
		elems[i] = cty.True
	}
	_, err := functions["chunklist"].Call([]cty.Value{cty.ListVal(elems), cty.NumberIntVal(1)})
	if err == nil || err.Error()+"." != elementsDetail {
		t.Errorf("chunklist: %v", err)
	}
}

// TestBoundedFunctionsWithinBounds: the same functions still answer what
// go-cty answers, sensitive and unknown arguments included.
func TestBoundedFunctionsWithinBounds(t *testing.T) {
	for src, want := range map[string]string{
		`length(setproduct(range(100), range(100), range(10)))`: "100000",
		`indent(2, "a\nb")`:                                  "a\n  b",
		`join("-", ["a", "b"], ["c"])`:                       "a-b-c",
		`format("%5s|%-3d|%.2f", "a", 1, 3.14159)`:           "    a|1  |3.14",
		`join(",", formatlist("%s=%d", ["a", "b"], [1, 2]))`: "a=1,b=2",
		`replace("a.b.c", ".", "::")`:                        "a::b::c",
		`regexreplace("a1b22", "[0-9]+", "<$0>")`:            "a<1>b<22>",
		`jsonencode({a = [1, "x"]})`:                         `{"a":[1,"x"]}`,
		`jsonencode(jsondecode("[[1]]"))`:                    "[[1]]",
		`length(flatten([[1, [2, 3]], [4]]))`:                "4",
		`length(concat(range(3), range(4)))`:                 "7",
		`length(split(",", "a,b,c"))`:                        "3",
		`length(chunklist(range(10), 3))`:                    "4",
		`length(regexall("[a-z]", "a1b2c"))`:                 "3",
		`length(keys(merge({a = 1}, {b = 2})))`:              "2",
		`length(setunion(toset(["a"]), toset(["b"])))`:       "2",
	} {
		v, diags := evalExpr(t, src)
		if diags.HasErrors() {
			t.Errorf("%s: %v", src, diags)
			continue
		}
		got := ""
		if v.Type() == cty.Number {
			got = v.AsBigFloat().Text('f', -1)
		} else {
			got = v.AsString()
		}
		if got != want {
			t.Errorf("%s = %q, want %q", src, got, want)
		}
	}
	// A sensitive argument stays sensitive; an unknown one gives unknown.
	expr, _ := hclsyntax.ParseExpression([]byte(`indent(2, v)`), "t.hcl", hcl.InitialPos)
	v, diags := expr.Value(&hcl.EvalContext{Functions: functions, Variables: map[string]cty.Value{"v": cty.StringVal("a\nb").Mark("sensitive")}})
	if diags.HasErrors() || !v.IsMarked() {
		t.Errorf("sensitive: %#v %v", v, diags)
	}
	v, diags = expr.Value(&hcl.EvalContext{Functions: functions, Variables: map[string]cty.Value{"v": cty.UnknownVal(cty.String)}})
	if diags.HasErrors() || v.IsKnown() {
		t.Errorf("unknown: %#v %v", v, diags)
	}
}
