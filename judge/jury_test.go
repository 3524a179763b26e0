package judge

import "testing"

func TestAggregate(t *testing.T) {
	eq := func(c float64) Answer { return Answer{Verdict: Equivalent, Confidence: c} }
	ch := func(c float64) Answer { return Answer{Verdict: Changed, Confidence: c} }
	bad := Answer{Err: "HTTP 500"}
	for _, tc := range []struct {
		name    string
		answers []Answer
		want    Outcome
	}{
		{"one equivalent", []Answer{eq(0.9)}, OutcomeEquivalent},
		{"all equivalent", []Answer{eq(0.9), eq(0.5), eq(1)}, OutcomeEquivalent},
		{"one changed", []Answer{ch(0.9)}, OutcomeChanged},
		{"any changed", []Answer{eq(1), eq(1), ch(0.5)}, OutcomeChanged},
		{"changed beats errors", []Answer{bad, ch(0.7)}, OutcomeChanged},
		{"unsure changed", []Answer{eq(0.9), ch(0.3)}, OutcomeNeedsConfirmation},
		{"alone unsure", []Answer{ch(0.49)}, OutcomeNeedsConfirmation},
		{"unsure equivalent", []Answer{eq(0.2)}, OutcomeNeedsConfirmation},
		{"equivalent and an error", []Answer{eq(0.9), bad}, OutcomeNeedsConfirmation},
		{"only errors", []Answer{bad, bad}, OutcomeJudgeError},
		{"one error", []Answer{bad}, OutcomeJudgeError},
		{"no judges", nil, OutcomeJudgeError},
	} {
		if got := Aggregate(tc.answers); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}
