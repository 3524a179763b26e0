package textdiff

import (
	"fmt"
	"strings"
)

// Unified returns a unified diff (3 lines of context) of two texts, with
// "\ No newline at end of file" where a text does not end in one.
// Configuration files are small, so a quadratic LCS is fine; beyond a
// bound the whole file is shown as replaced.
func Unified(oldName, newName, a, b string) string {
	al, bl := splitLines(a), splitLines(b)
	ops := Lines(al, bl)
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", oldName, newName)
	const ctx = 3
	for i := 0; i < len(ops); {
		// Find the next change.
		for i < len(ops) && ops[i].Kind == ' ' {
			i++
		}
		if i == len(ops) {
			break
		}
		start := max(0, i-ctx)
		end := i
		for end < len(ops) {
			if ops[end].Kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].Kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*ctx {
				end = min(len(ops), end+ctx)
				break
			}
			end = run
		}
		aStart, bStart, aLen, bLen := ops[start].A, ops[start].B, 0, 0
		for _, op := range ops[start:end] {
			if op.Kind != '+' {
				aLen++
			}
			if op.Kind != '-' {
				bLen++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(aStart, aLen), hunkRange(bStart, bLen))
		for _, op := range ops[start:end] {
			out.WriteByte(op.Kind)
			out.WriteString(op.Text)
			if !strings.HasSuffix(op.Text, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = end
	}
	return out.String()
}

func hunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// Op is one line of a line-wise diff.
type Op struct {
	Kind byte // ' ' kept, '-' removed, '+' added
	Text string
	A, B int // line indexes (0-based) in the old and new text at this op
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// Lines is a longest-common-subsequence diff of two line lists, removals
// before additions within a changed run, as diff -u prints them. Past 4
// million LCS cells it shows every old line removed and every new line
// added: correct, only less tidy.
func Lines(a, b []string) []Op {
	if len(a)*len(b) > 4_000_000 {
		var ops []Op
		for i, l := range a {
			ops = append(ops, Op{'-', l, i, 0})
		}
		for j, l := range b {
			ops = append(ops, Op{'+', l, len(a), j})
		}
		return ops
	}
	// lcs[i][j] = length of the LCS of a[i:] and b[j:].
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
	var ops []Op
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ops = append(ops, Op{' ', a[i], i, j})
			i++
			j++
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, Op{'-', a[i], i, j})
			i++
		default:
			ops = append(ops, Op{'+', b[j], i, j})
			j++
		}
	}
	return ops
}
