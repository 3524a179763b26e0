package judge

// Outcome is what a jury's answers to one question come to.
type Outcome string

const (
	// OutcomeEquivalent: every judge answered equivalent, confidently.
	OutcomeEquivalent Outcome = "equivalent"
	// OutcomeChanged: at least one judge answered changed, confidently.
	OutcomeChanged Outcome = "changed"
	// OutcomeNeedsConfirmation: the jury is split or unsure.
	OutcomeNeedsConfirmation Outcome = "needs-confirmation"
	// OutcomeJudgeError: no judge answered.
	OutcomeJudgeError Outcome = "judge-error"
)

// MinConfidence is the confidence from which an answer counts on its own.
const MinConfidence = 0.5

// Aggregate is the jury's rule, in this order:
//
//   - no judge answered (every one erred: a garbage answer, an HTTP error,
//     a timeout, a spent budget): judge-error, and the structural grade
//     stands;
//   - any judge answered changed with confidence >= MinConfidence:
//     changed, whatever the others said;
//   - every judge answered equivalent with confidence >= MinConfidence:
//     equivalent;
//   - otherwise the jury is split: needs-confirmation. That is some judges
//     equivalent while others erred, or an answer (either word) below
//     MinConfidence.
//
// So equivalence needs the whole jury, confident; one confident changed
// is enough to keep the change major; and errors never count as either.
func Aggregate(answers []Answer) Outcome {
	answered, equivalent := 0, 0
	for _, a := range answers {
		if a.Err != "" {
			continue
		}
		answered++
		switch {
		case a.Verdict == Changed && a.Confidence >= MinConfidence:
			return OutcomeChanged
		case a.Verdict == Equivalent && a.Confidence >= MinConfidence:
			equivalent++
		}
	}
	switch {
	case answered == 0:
		return OutcomeJudgeError
	case equivalent == len(answers):
		return OutcomeEquivalent
	}
	return OutcomeNeedsConfirmation
}
