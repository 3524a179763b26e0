package render

import "github.com/mcpform/mcpform/plan"

// diffLine is one line of a line-wise diff: kept (NoOp), added or removed.
type diffLine struct {
	op   plan.Action
	text string
}

// maxDiffCells bounds the LCS table; beyond it the diff shows every old line
// removed and every new line added, which is correct, only less tidy.
const maxDiffCells = 4 << 20

// lineDiff is a longest-common-subsequence diff of two line lists, removals
// before additions within a changed run, as diff -u prints them.
func lineDiff(a, b []string) []diffLine {
	var out []diffLine
	if len(a)*len(b) > maxDiffCells {
		for _, l := range a {
			out = append(out, diffLine{plan.Delete, l})
		}
		for _, l := range b {
			out = append(out, diffLine{plan.Create, l})
		}
		return out
	}
	// lcs[i][j] is the LCS length of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			out = append(out, diffLine{plan.NoOp, a[i]})
			i++
			j++
		case j >= len(b) || i < len(a) && lcs[i+1][j] >= lcs[i][j+1]:
			out = append(out, diffLine{plan.Delete, a[i]})
			i++
		default:
			out = append(out, diffLine{plan.Create, b[j]})
			j++
		}
	}
	return out
}
