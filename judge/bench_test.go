package judge

import (
	"context"
	"testing"

	"github.com/mcpform/mcpform/internal/judgetest"
)

var benchQ = Question{Field: "tool description",
	Before: "Get current time in a specific timezone. Use IANA timezone names (e.g. 'America/New_York').",
	After:  "Get the current time in a specific time zone. Use IANA time zone names (for example 'America/New_York')."}

var benchResponse = []byte(`{"id":"chatcmpl-1","object":"chat.completion","model":"m","choices":[{"index":0,"finish_reason":"stop",` +
	`"message":{"role":"assistant","content":"{\"verdict\":\"equivalent\",\"confidence\":0.9,\"reason\":\"Reworded, same meaning.\"}"}}],` +
	`"usage":{"prompt_tokens":950,"completion_tokens":50,"total_tokens":1000}}`)

// BenchmarkJudgeWork is mcpform's own work per changed text and judge,
// without the network or the model: the request's encoding and the
// response's strict parse.
func BenchmarkJudgeWork(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Request("m", benchQ); err != nil {
			b.Fatal(err)
		}
		content, _, err := parseResponse(benchResponse)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, _, err := ParseVerdict([]byte(content)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkJudgeLoopback is one question to a jury of one whose endpoint
// answers at once on loopback (the fake): what a judge costs a plan beside
// the model's own time.
func BenchmarkJudgeLoopback(b *testing.B) {
	srv := judgetest.Start()
	defer srv.Close()
	j := NewJury([]Config{{Name: "j", Endpoint: srv.Endpoint(), Model: "equivalent", BudgetTokens: MaxBudget}}, nil, nil)
	b.ReportAllocs()
	for b.Loop() {
		if a := j.Ask(context.Background(), benchQ)[0]; a.Err != "" {
			b.Fatal(a.Err)
		}
	}
}
