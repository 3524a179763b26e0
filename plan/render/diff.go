package render

import (
	"github.com/mcpform/mcpform/internal/textdiff"
	"github.com/mcpform/mcpform/plan"
)

// diffLine is one line of a line-wise diff: kept (NoOp), added or removed.
type diffLine struct {
	op   plan.Action
	text string
}

// lineDiff is textdiff's line diff, in plan actions.
func lineDiff(a, b []string) []diffLine {
	ops := textdiff.Lines(a, b)
	out := make([]diffLine, len(ops))
	for i, op := range ops {
		act := plan.NoOp
		switch op.Kind {
		case '-':
			act = plan.Delete
		case '+':
			act = plan.Create
		}
		out[i] = diffLine{act, op.Text}
	}
	return out
}
