package render

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/plan"
)

// Markdown writes the plan as a pull-request comment: the summary, a table
// of servers, then each changed server as a ```diff block of the human
// plan. Server text is escaped as in Human and then neutralized for
// markdown: table cells and headings escape markdown punctuation and HTML
// (&lt;), and each code block is fenced with more backticks than any run
// inside it, so no server string can close the fence or inject markup.
func Markdown(w io.Writer, p *plan.Plan) error {
	bw := bufio.NewWriter(w)
	sum := summarize(p)
	fmt.Fprintf(bw, "## mcpform plan\n\n")
	if !p.HasChanges() && len(p.Errors()) == 0 {
		fmt.Fprintf(bw, "No changes. Your MCP servers match %s.\n", mdText(lockName(p)))
		return bw.Flush()
	}
	fmt.Fprintf(bw, "**Plan:** %d to add, %d to change, %d to remove. Definitional: %d, informational: %d, config: %d. **Required bump: %s.**\n\n",
		sum.Add, sum.Change, sum.Remove, sum.Definitional, sum.Informational, sum.Config, sum.RequiredBump)
	if sum.Security > 0 {
		fmt.Fprintf(bw, "> [!WARNING]\n> %d security-relevant change%s: read %s with an attacker in mind.\n\n",
			sum.Security, plural(sum.Security), map[bool]string{true: "it", false: "them"}[sum.Security == 1])
	}
	fmt.Fprintf(bw, "| Server | Action | Changes | Required bump | Security-relevant |\n| --- | --- | ---: | --- | ---: |\n")
	for _, s := range p.Servers {
		if s.Action == plan.NoOp && s.Error == "" && s.VersionError == "" {
			continue
		}
		sec := 0
		for _, c := range s.Changes {
			if c.Security {
				sec++
			}
		}
		action := s.Action.String()
		if s.Error != "" || s.VersionError != "" {
			action += ", error"
		}
		fmt.Fprintf(bw, "| %s | %s | %d | %s | %d |\n", mdText(s.Addr), action, len(s.Changes), s.RequiredBump, sec)
	}
	for _, s := range p.Servers {
		if s.Action == plan.NoOp && s.Error == "" && s.VersionError == "" {
			continue
		}
		var buf bytes.Buffer
		h := &human{w: bufio.NewWriter(&buf), pal: newPalette(false)}
		h.server(s)
		h.w.Flush()
		body := diffGlyphs(buf.String())
		fence := strings.Repeat("`", max(3, longestRun(body, '`')+1))
		fmt.Fprintf(bw, "\n### %s\n\n%sdiff\n%s%s\n", mdText(s.Addr), fence, body, fence)
	}
	if errs := p.Errors(); len(errs) > 0 {
		fmt.Fprintf(bw, "\n### Errors\n\n")
		for _, e := range errs {
			fmt.Fprintf(bw, "- %s\n", mdText(e))
		}
	}
	if len(p.Notes) > 0 {
		fmt.Fprintf(bw, "\n### Notes\n\n")
		for _, n := range p.Notes {
			fmt.Fprintf(bw, "- %s\n", mdText(n))
		}
	}
	return bw.Flush()
}

// diffGlyphs moves each line's leading +, - or ~ to column 0 (~ as !), so
// GitHub's diff highlighting colours the plan as a terminal would.
func diffGlyphs(s string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		t := strings.TrimLeft(l, " ")
		n := len(l) - len(t)
		if n == 0 || len(t) < 2 || t[1] != ' ' && t[1] != '\n' {
			continue
		}
		sym := t[0]
		switch sym {
		case '~':
			sym = '!'
		case '+', '-':
		default:
			continue
		}
		lines[i] = string(sym) + l[1:n] + " " + t[1:]
	}
	return strings.Join(lines, "")
}

func longestRun(s string, c byte) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}

// mdText makes text safe in a markdown paragraph, heading or table cell:
// hidden characters escaped first, then HTML and markdown punctuation, so
// the rendered comment shows exactly escape.String's output.
func mdText(s string) string {
	s = escape.String(s)
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '\\', '`', '*', '_', '{', '}', '[', ']', '(', ')', '#', '+', '-', '!', '|', '~', '"', '\'', ':', '@', '=':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
