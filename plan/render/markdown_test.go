package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpform/mcpform/plan"
)

const hostile = "a | b </details></summary>\n```````\n<img src=x onerror=alert(1)>\n# injected\n</details>"

// bigPlan is a first import: servers servers, each gaining tools tools whose
// descriptions are desc bytes long, as a realistic first plan is.
func bigPlan(t *testing.T, servers, tools, desc int) *plan.Plan {
	t.Helper()
	p := &plan.Plan{FormatVersion: plan.FormatVersion, LockPath: "mcp.lock"}
	for s := range servers {
		var ts []string
		for i := range tools {
			d := strings.Repeat(fmt.Sprintf("Tool %d of server %d does one thing. ", i, s), desc/30+1)[:desc]
			raw, err := json.Marshal(map[string]any{"name": fmt.Sprintf("tool_%03d", i), "description": d,
				"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"path": map[string]string{"type": "string"}, "depth": map[string]string{"type": "integer"}}, "required": []string{"path"}}})
			if err != nil {
				t.Fatal(err)
			}
			ts = append(ts, string(raw))
		}
		sp := serverPlan(fmt.Sprintf("s%02d", s), entry(t, ""), entry(t, "", ts...))
		p.Servers = append(p.Servers, sp)
		p.RequiredBump = max(p.RequiredBump, sp.RequiredBump)
	}
	return p
}

func markdown(t *testing.T, p *plan.Plan, o MarkdownOptions) string {
	t.Helper()
	var buf bytes.Buffer
	if err := MarkdownWithOptions(&buf, p, o); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

var (
	summaryLine = regexp.MustCompile("^<details><summary>[^<>]*</summary>$")
	openFence   = regexp.MustCompile("^(`{3,})diff$")
	closesFence = regexp.MustCompile("^ {0,3}(`{3,}) *$")
	escaped     = regexp.MustCompile(`\\.`)
	codeSpan    = regexp.MustCompile("`[A-Z0-9-]+`|`mcpform plan`")
)

// checkComment fails unless md is at most budget bytes and well formed as
// GitHub reads it: every fence and <details> closed, fences only inside a
// <details>, no HTML but the renderer's own tags, no server text closing a
// fence early, every table row of six cells.
func checkComment(t *testing.T, md string, budget int) {
	t.Helper()
	if len(md) > budget {
		t.Errorf("comment is %d bytes, over the budget of %d", len(md), budget)
	}
	fence, open := "", false
	for i, l := range strings.Split(md, "\n") {
		n := i + 1
		if fence != "" {
			if l == fence {
				fence = ""
			} else if m := closesFence.FindStringSubmatch(l); m != nil && len(m[1]) >= len(fence) {
				t.Fatalf("line %d: %q closes the fence %q early:\n%s", n, l, fence, md)
			}
			continue
		}
		switch {
		case summaryLine.MatchString(l):
			if open {
				t.Fatalf("line %d: <details> inside <details>", n)
			}
			open = true
		case l == "</details>":
			if !open {
				t.Fatalf("line %d: </details> without <details>", n)
			}
			open = false
		case openFence.MatchString(l):
			if !open {
				t.Fatalf("line %d: a fence outside <details>", n)
			}
			fence = openFence.FindStringSubmatch(l)[1]
		case strings.Contains(codeSpan.ReplaceAllString(escaped.ReplaceAllString(l, ""), ""), "`"):
			t.Fatalf("line %d: a backtick outside a fence, neither escaped nor the renderer's: %q", n, l)
		case strings.Contains(l, "<"), strings.Contains(strings.TrimPrefix(l, "> "), ">"):
			t.Fatalf("line %d: HTML outside a fence: %q", n, l)
		}
		if strings.HasPrefix(l, "| ") {
			if got := strings.Count(escaped.ReplaceAllString(l, ""), "|"); got != 7 {
				t.Fatalf("line %d: table row with %d cell borders, want 7: %q", n, got, l)
			}
		}
	}
	if fence != "" || open {
		t.Fatalf("comment ends inside a fence (%q) or a <details> (%v):\n%s", fence, open, md)
	}
}

const link = "https://github.com/acme/mcp/actions/runs/42"

// A short plan is shown whole: every server's diff, no closing note.
func TestMarkdownShortPlanIsWhole(t *testing.T) {
	md := markdown(t, rugPull(t), MarkdownOptions{FullOutputURL: link})
	checkComment(t, md, markdownBudget)
	if got := strings.Count(md, "<details>"); got != 3 {
		t.Errorf("%d <details> blocks, want 3", got)
	}
	if strings.Contains(md, "[!NOTE]") || strings.Contains(md, link) {
		t.Errorf("a whole plan has a closing note:\n%s", md)
	}
}

// A first import of 5 servers is 250 KB of plan: the comment keeps the
// summary of every server and the diffs that fit, and says what it left out
// and where the full plan is.
func TestMarkdownLongPlanFits(t *testing.T) {
	p := bigPlan(t, 5, 120, 200)
	whole := markdown(t, p, MarkdownOptions{Budget: 1 << 30})
	if len(whole) < 4*markdownBudget {
		t.Fatalf("the test plan is only %d bytes", len(whole))
	}
	md := markdown(t, p, MarkdownOptions{FullOutputURL: link})
	checkComment(t, md, markdownBudget)
	for s := range 5 {
		if !strings.Contains(md, fmt.Sprintf("| server.s%02d | update | 120: 120 minor | minor | 0 | `MCP-TOOL-ADDED` |\n", s)) {
			t.Errorf("no table row for server.s%02d", s)
		}
	}
	if !strings.Contains(md, "leaves out the diffs of ") || !strings.Contains(md, "For the full plan, see [the job's full output]("+link+").\n") {
		t.Errorf("no closing note with the link:\n%s", md[len(md)-600:])
	}
	if !strings.HasSuffix(md, "\n") || len(md) < markdownBudget/2 {
		t.Errorf("the comment uses %d of %d bytes", len(md), markdownBudget)
	}
}

// The golden comment for a plan over its budget: a small budget keeps the
// file readable; the rules are those of the default one.
func TestMarkdownGoldenOverBudget(t *testing.T) {
	md := markdown(t, bigPlan(t, 4, 3, 40), MarkdownOptions{Budget: 4000, FullOutputURL: link})
	checkComment(t, md, 4000)
	path := filepath.Join("testdata", "overbudget.md")
	if *update {
		if err := os.WriteFile(path, []byte(md), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if d := cmp.Diff(string(want), md); d != "" {
		t.Errorf("%s (-want +got):\n%s", path, d)
	}
}

// A server whose diff alone is over the budget shows its first lines,
// cut at a line boundary, with its fence closed and a note.
func TestMarkdownCutsOneHugeDiff(t *testing.T) {
	p := bigPlan(t, 1, 400, 200)
	whole := markdown(t, p, MarkdownOptions{Budget: 1 << 30})
	md := markdown(t, p, MarkdownOptions{})
	checkComment(t, md, markdownBudget)
	start := strings.Index(md, "```diff\n") + len("```diff\n")
	end := strings.Index(md[start:], "\n```\n") + start + 1
	if start < len("```diff\n") || end <= start {
		t.Fatalf("no diff block:\n%s", md)
	}
	body := md[start:end]
	if !strings.Contains(whole, "```diff\n"+body) || !strings.HasSuffix(body, "\n") || len(body) < markdownBudget/2 {
		t.Errorf("the cut diff (%d bytes) is not a prefix of whole lines of the diff", len(body))
	}
	n := strings.Count(body, "\n")
	if !regexp.MustCompile(fmt.Sprintf("```\n\n_This diff is cut after %d of its [0-9]+ lines to fit a comment._\n\n</details>\n", n)).MatchString(md) {
		t.Errorf("no note after the cut diff:\n%s", md[end:])
	}
	if !strings.Contains(md, "The diff of server.s00 is cut to fit GitHub's comment limit. For the full plan, see the job's full output, or run `mcpform plan`.\n") {
		t.Errorf("no closing note without a link:\n%s", md[end:])
	}
}

// Server text cannot close a fence or a <details>, or inject HTML, whether
// the comment is whole, left out from the end or cut.
func TestMarkdownHostileText(t *testing.T) {
	p := bigPlan(t, 3, 30, 100)
	for _, sp := range p.Servers {
		sp.Addr = "server." + hostile
		for i := range sp.Changes {
			sp.Changes[i].Rule = hostile
			if i%3 == 0 {
				sp.Changes[i].After = json.RawMessage(`{"description":` + string(must(json.Marshal(hostile+"\n"+strings.Repeat("`", 12)))) + `}`)
			}
		}
	}
	p.Servers[0].Error = hostile
	p.Servers[1].VersionError = hostile
	p.Notes = []string{hostile}
	for _, budget := range []int{1 << 30, markdownBudget, 20000, 5000, 2048} {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			md := markdown(t, p, MarkdownOptions{Budget: budget, FullOutputURL: "https://x.example/)](javascript:alert(1))"})
			checkComment(t, md, budget)
			if strings.Contains(md, "javascript") {
				t.Errorf("a hostile link is in the note")
			}
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestJobURL(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, tt := range []struct {
		env  func(string) string
		want string
	}{
		{env("GITHUB_SERVER_URL", "https://github.com", "GITHUB_REPOSITORY", "acme/mcp", "GITHUB_RUN_ID", "42"), link},
		{env("GITHUB_SERVER_URL", "https://ghe.example/", "GITHUB_REPOSITORY", "a/b", "GITHUB_RUN_ID", "7", "CI_JOB_URL", "https://gitlab.example/j/1"), "https://ghe.example/a/b/actions/runs/7"},
		{env("GITHUB_REPOSITORY", "acme/mcp", "CI_JOB_URL", "https://gitlab.example/a/b/-/jobs/9"), "https://gitlab.example/a/b/-/jobs/9"},
		{env(), ""},
	} {
		if got := JobURL(tt.env); got != tt.want {
			t.Errorf("JobURL = %q, want %q", got, tt.want)
		}
	}
}

// Over random plan sizes and budgets: the comment is within its budget and
// well formed; a plan that fits is shown whole, one that does not keeps its
// diffs in order (the last possibly cut) and ends with the closing note.
func TestMarkdownRandomSizes(t *testing.T) {
	rng := rand.New(rand.NewSource(15))
	blocks := regexp.MustCompile("(?s)\n<details>.*?</details>\n")
	for i := range 40 {
		p := bigPlan(t, 1+rng.Intn(12), rng.Intn(60), 1+rng.Intn(300))
		budget := minMarkdownBudget + rng.Intn(3*markdownBudget)
		whole := markdown(t, p, MarkdownOptions{Budget: 1 << 30})
		md := markdown(t, p, MarkdownOptions{Budget: budget, FullOutputURL: link})
		checkComment(t, md, budget)
		if len(whole) <= budget {
			if md != whole {
				t.Errorf("case %d: a plan of %d bytes within a budget of %d is not shown whole", i, len(whole), budget)
			}
			continue
		}
		if !strings.HasSuffix(md, "For the full plan, see [the job's full output]("+link+").\n") {
			t.Errorf("case %d: no closing note:\n%s", i, md)
		}
		want, got := blocks.FindAllString(whole, -1), blocks.FindAllString(md, -1)
		for j, b := range got {
			if b != want[j] && (j != len(got)-1 || !strings.Contains(b, "_This diff is cut after ")) {
				t.Errorf("case %d: diff %d is not the plan's diff %d whole, nor the last one cut", i, j, j)
			}
		}
	}
}
