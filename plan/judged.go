package plan

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"github.com/mcpform/mcpform/judge"
	"github.com/mcpform/mcpform/lang"
)

// Judgement is what the judges of mcp.hcl (judge blocks) said of a changed
// description or instructions text: the jury's outcome and each judge's
// answer. It is in every output and in a saved plan, never in the lock.
type Judgement struct {
	// Outcome is "equivalent" (the change is graded patch,
	// MCP-TEXT-JUDGED-EQUIVALENT), "changed" (the structural rule stands:
	// major, security-relevant), "needs-confirmation" (the jury is split
	// or unsure: MCP-TEXT-NEEDS-CONFIRMATION, major) or "judge-error" (no
	// judge answered: the structural rule stands).
	Outcome string `json:"outcome"`
	// StructuralRule is the rule the change had before the jury.
	StructuralRule string `json:"structural_rule"`
	// Judges are the answers, in the order the judges are declared.
	Judges []JudgeAnswer `json:"judges"`
}

// JudgeAnswer is one judge's answer. Reason and Error are untrusted text
// (from the endpoint): escape them before showing them.
type JudgeAnswer struct {
	Name  string `json:"name"`
	Model string `json:"model"`
	// PromptVersion names the prompt the judge was sent (judge/prompt).
	PromptVersion string `json:"prompt_version"`
	// Verdict is "equivalent" or "changed"; "" when Error is set.
	Verdict    string   `json:"verdict,omitempty"`
	Confidence *float64 `json:"confidence,omitempty"`
	Reason     string   `json:"reason,omitempty"`
	// Error is why the judge gave no verdict (judge-error).
	Error string `json:"error,omitempty"`
}

// The jury's outcomes, as Judgement.Outcome spells them.
const (
	OutcomeEquivalent        = string(judge.OutcomeEquivalent)
	OutcomeChanged           = string(judge.OutcomeChanged)
	OutcomeNeedsConfirmation = string(judge.OutcomeNeedsConfirmation)
	OutcomeJudgeError        = string(judge.OutcomeJudgeError)
)

// judgedField is what each rule the jury judges is a change of, as the
// judge is told ("field" of its question). Only these rules are judged:
// the descriptions and the instructions, after the deterministic rules
// (MCP-TEXT-WHITESPACE-CHANGED, MCP-TEXT-COSMETIC-CHANGED) have taken
// what needs no judge.
var judgedField = map[string]string{
	"MCP-TOOL-DESCRIPTION-CHANGED":              "tool description",
	"MCP-PROMPT-DESCRIPTION-CHANGED":            "prompt description",
	"MCP-RESOURCE-DESCRIPTION-CHANGED":          "resource description",
	"MCP-RESOURCE-TEMPLATE-DESCRIPTION-CHANGED": "resource template description",
	"MCP-PROMPT-ARGUMENT-DESCRIPTION-CHANGED":   "prompt argument description",
	"MCP-INPUT-DESCRIPTION-CHANGED":             "description inside a tool's input schema",
	"MCP-OUTPUT-DESCRIPTION-CHANGED":            "description inside a tool's output schema",
	"MCP-INSTRUCTIONS-CHANGED":                  "server instructions",
}

// judgeParallelism bounds the texts of one server put to the jury at
// once; each text goes to every judge at once.
const judgeParallelism = 4

// textJudge puts a plan's changed texts to its jury; nil without judges.
type textJudge struct {
	ctx  context.Context
	jury *judge.Jury
}

// newTextJudge is the jury of cfg's judge blocks, nil without any. Its
// budgets last for the plan.
func newTextJudge(ctx context.Context, judges []lang.Judge, lookupEnv func(string) (string, bool)) *textJudge {
	if len(judges) == 0 {
		return nil
	}
	cfgs := make([]judge.Config, len(judges))
	for i, j := range judges {
		cfgs[i] = judge.Config{Name: j.Name, Endpoint: j.Endpoint, Model: j.Model, APIKeyEnv: j.APIKeyEnv,
			Timeout: j.Timeout, BudgetTokens: j.BudgetTokens}
	}
	return &textJudge{ctx: ctx, jury: judge.NewJury(cfgs, lookupEnv, nil)}
}

// judge regrades, in place, each changed text of changes the jury judges
// (judgedField, both sides strings), and records the Judgement on it.
func (t *textJudge) judge(changes []Change) {
	if t == nil {
		return
	}
	var todo []int
	for i, c := range changes {
		if _, ok := judgedField[c.Rule]; ok && c.Action == Update && isJSONString(c.Before) && isJSONString(c.After) {
			todo = append(todo, i)
		}
	}
	sem := make(chan struct{}, judgeParallelism)
	var wg sync.WaitGroup
	for _, i := range todo {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			c := &changes[i]
			var before, after string
			_ = json.Unmarshal(c.Before, &before)
			_ = json.Unmarshal(c.After, &after)
			answers := t.jury.Ask(t.ctx, judge.Question{Field: judgedField[c.Rule], Before: before, After: after})
			applyJudgement(c, answers)
		}()
	}
	wg.Wait()
}

// applyJudgement records the answers on c and grades c by the jury's
// outcome: equivalent lowers it to MCP-TEXT-JUDGED-EQUIVALENT (patch),
// needs-confirmation is MCP-TEXT-NEEDS-CONFIRMATION (major), changed and
// judge-error keep the structural rule.
func applyJudgement(c *Change, answers []judge.Answer) {
	j := &Judgement{Outcome: string(judge.Aggregate(answers)), StructuralRule: c.Rule, Judges: make([]JudgeAnswer, len(answers))}
	for i, a := range answers {
		ja := JudgeAnswer{Name: a.Judge, Model: a.Model, PromptVersion: a.PromptVersion, Verdict: string(a.Verdict), Reason: a.Reason, Error: a.Err}
		if a.Err == "" {
			conf := a.Confidence
			ja.Confidence = &conf
		}
		j.Judges[i] = ja
	}
	c.Judgement = j
	rule := ""
	switch j.Outcome {
	case OutcomeEquivalent:
		rule = "MCP-TEXT-JUDGED-EQUIVALENT"
	case OutcomeNeedsConfirmation:
		rule = "MCP-TEXT-NEEDS-CONFIRMATION"
	default:
		return
	}
	r, _ := LookupRule(rule)
	c.Rule, c.Grade, c.Class, c.Security = r.ID, r.Grade, r.Class, r.Security
}

func isJSONString(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '"' }

// cosmeticOnly reports whether a and b differ only in ASCII letter case
// and in ASCII sentence punctuation at the start or end of a word, once
// whitespace is normalised as whitespaceOnly does: a word is a run of
// non-whitespace, and it may lose or gain leading ( [ { " ' ` and trailing
// . , ; : ! ? ) ] } " ' `. Punctuation inside a word ("1.5", "~/.ssh",
// "don't", "-rf") is text, and so is a word of punctuation alone. Every
// non-ASCII character counts as text, case and punctuation included:
// Unicode spaces, zero-width, bidi and tag characters are how hidden
// instructions hide.
func cosmeticOnly(a, b string) bool {
	return slices.Equal(cosmeticWords(a), cosmeticWords(b))
}

const (
	leadPunct  = "([{\"'`"
	trailPunct = ".,;:!?)]}\"'`"
)

func cosmeticWords(s string) []string {
	fields := asciiFields(s)
	for i, f := range fields {
		w := strings.TrimRight(strings.TrimLeft(f, leadPunct), trailPunct)
		if w == "" {
			w = f // punctuation alone is a word
		}
		fields[i] = asciiLower(w)
	}
	return fields
}

func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
