package render

import (
	"fmt"
	"strconv"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/plan"
)

// The judges' verdicts on a changed text (plan.Judgement), as every
// rendering shows them. A judge's reason and error are untrusted text:
// they are always escaped, and quoted, so that an instruction in them
// reads as what it is, a judge's words.

// judgeOutcome says in words what the jury's outcome did to the change.
func judgeOutcome(j *plan.Judgement) string {
	structural, grade := j.StructuralRule, "major"
	if r, ok := plan.LookupRule(j.StructuralRule); ok {
		grade = r.Grade.String()
	}
	switch j.Outcome {
	case plan.OutcomeEquivalent:
		return "equivalent: every judge found the meaning unchanged; graded patch instead of " + structural + " (" + grade + ")"
	case plan.OutcomeChanged:
		return "changed: the meaning moved; " + structural + " (" + grade + ") stands"
	case plan.OutcomeNeedsConfirmation:
		return "needs-confirmation: the judges are split or unsure; read the change and confirm it (graded " + grade + ", as " + structural + ")"
	case plan.OutcomeJudgeError:
		return "judge-error: no judge answered; " + structural + " (" + grade + ") stands"
	}
	return escape.String(j.Outcome)
}

// judgeAnswer is one judge's answer on one line.
func judgeAnswer(a plan.JudgeAnswer) string {
	s := fmt.Sprintf("%s (model %s, prompt %s): ", escape.String(a.Name), quote(a.Model), escape.String(a.PromptVersion))
	if a.Error != "" {
		return s + "judge-error: " + escape.String(a.Error)
	}
	conf := ""
	if a.Confidence != nil {
		conf = ", confidence " + strconv.FormatFloat(*a.Confidence, 'f', 2, 64)
	}
	s += escape.String(a.Verdict) + conf
	if a.Reason != "" {
		s += ": " + quote(a.Reason)
	}
	return s
}

// judgement prints the verdicts under a change's rule line.
func (h *human) judgement(indent int, c plan.Change) {
	j := c.Judgement
	if j == nil {
		return
	}
	h.printf("%s# judges: %s\n", pad(indent), judgeOutcome(j))
	for _, a := range j.Judges {
		h.printf("%s#   %s\n", pad(indent), judgeAnswer(a))
	}
}

// judgeCounts counts the changed texts the jury left to a person:
// needs-confirmation, and judge-error (the structural grade stood).
func judgeCounts(p *plan.Plan) (confirm, failed int) {
	for _, s := range p.Servers {
		for _, c := range s.Changes {
			if c.Judgement == nil {
				continue
			}
			switch c.Judgement.Outcome {
			case plan.OutcomeNeedsConfirmation:
				confirm++
			case plan.OutcomeJudgeError:
				failed++
			}
		}
	}
	return confirm, failed
}

// judgeSummary is the plan's closing lines about its judges, if any.
func judgeSummary(p *plan.Plan) []string {
	confirm, failed := judgeCounts(p)
	var out []string
	if confirm > 0 {
		out = append(out, fmt.Sprintf("%d changed text%s need%s confirmation: the judges are split (needs-confirmation).", confirm, plural(confirm), map[bool]string{true: "s", false: ""}[confirm == 1]))
	}
	if failed > 0 {
		out = append(out, fmt.Sprintf("%d changed text%s kept %s structural grade: no judge answered (judge-error).", failed, plural(failed), map[bool]string{true: "its", false: "their"}[failed == 1]))
	}
	return out
}

// sarifJudgement is what a SARIF result's message adds for a judged
// change.
func sarifJudgement(c plan.Change) string {
	j := c.Judgement
	if j == nil {
		return ""
	}
	s := " Judges: " + judgeOutcome(j) + "."
	for _, a := range j.Judges {
		s += " " + judgeAnswer(a) + "."
	}
	return s
}
