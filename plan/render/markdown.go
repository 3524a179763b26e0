package render

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/plan"
)

// markdownBudget is the most bytes Markdown writes. GitHub holds 65,536
// characters in a pull-request comment, and a byte is never more than one
// character, so a budget in bytes holds whatever the text. The 5,536 left
// over are for what a CI recipe puts around the plan (examples/ci adds a
// marker and a status line) without the comment ever being refused.
const markdownBudget = 60000

// minMarkdownBudget is the smallest budget honoured: room for the header,
// the closing note and a little of the table.
const minMarkdownBudget = 2048

// maxURL is the longest FullOutputURL linked; a longer one is not a CI
// job's page.
const maxURL = 512

// MarkdownOptions control the markdown rendering.
type MarkdownOptions struct {
	// Budget is the most bytes written; 0 means markdownBudget, and a
	// budget below 2,048 counts as 2,048.
	Budget int
	// FullOutputURL is the page of the CI job whose output holds the whole
	// plan, linked from the note when the comment leaves something out
	// (JobURL finds it in the CI environment). Empty, or not a plain
	// http(s) URL, the note says to see the job's full output in words.
	FullOutputURL string
}

// JobURL is the page of the CI run that runs plan, from the variables
// GitHub Actions sets ($GITHUB_SERVER_URL/$GITHUB_REPOSITORY/actions/runs/
// $GITHUB_RUN_ID) or GitLab CI's $CI_JOB_URL; "" outside CI.
func JobURL(getenv func(string) string) string {
	server, repo, run := getenv("GITHUB_SERVER_URL"), getenv("GITHUB_REPOSITORY"), getenv("GITHUB_RUN_ID")
	if server != "" && repo != "" && run != "" {
		return strings.TrimRight(server, "/") + "/" + repo + "/actions/runs/" + run
	}
	return getenv("CI_JOB_URL")
}

// Markdown writes the plan as a pull-request comment with the default
// options: no link to the job, markdownBudget.
func Markdown(w io.Writer, p *plan.Plan) error {
	return MarkdownWithOptions(w, p, MarkdownOptions{})
}

// MarkdownWithOptions writes the plan as a pull-request comment that fits
// o.Budget by construction. First the totals, then a table with one row per
// server (action, changes by grade, security-relevant count, rule ids), the
// errors and the notes; then each server's human plan as a ```diff block
// folded in a <details> element. What does not fit is left out whole, from
// the end: table rows, list items, servers' diffs. Only a diff that could
// not fit even alone is cut, at a line boundary inside its own fence, which
// is then closed. A closing note says what was left out and links to
// o.FullOutputURL.
//
// Server text is escaped as in Human and then neutralized for where it
// lands: in table cells and list items markdown punctuation and HTML are
// escaped (&lt;); in a <summary>, which GitHub reads as HTML, HTML is
// escaped; in a code block nothing needs to be, because each fence is
// longer than any run of backticks inside it. No server string can close a
// fence or a <details>, or inject markup.
func MarkdownWithOptions(w io.Writer, p *plan.Plan, o MarkdownOptions) error {
	budget := o.Budget
	if budget == 0 {
		budget = markdownBudget
	}
	budget = max(budget, minMarkdownBudget)
	link := o.FullOutputURL
	if !plainURL(link) {
		link = ""
	}

	var head strings.Builder
	head.WriteString("## mcpform plan\n\n")
	if !p.HasChanges() && len(p.Errors()) == 0 {
		fmt.Fprintf(&head, "No changes. Your MCP servers match %s.\n", mdText(clip(lockName(p))))
		_, err := io.WriteString(w, head.String())
		return err
	}
	sum := summarize(p)
	counts := fmt.Sprintf("%d to add, %d to change, %d to remove. Definitional: %d, informational: %d, config: %d%s. **Required bump: %s.**",
		sum.Add, sum.Change, sum.Remove, sum.Definitional, sum.Informational, sum.Config, codeCount(sum), sum.RequiredBump)
	if sum.Failed > 0 {
		fmt.Fprintf(&head, "**Plan incomplete:** %d of %d servers failed; fix the errors below.", sum.Failed, sum.Servers)
		if sum.Failed < sum.Servers {
			fmt.Fprintf(&head, " Planned so far: %s", counts)
		}
		head.WriteString("\n")
	} else {
		fmt.Fprintf(&head, "**Plan:** %s\n", counts)
	}
	if sum.Security > 0 {
		fmt.Fprintf(&head, "\n> [!WARNING]\n> %d security-relevant change%s: read %s with an attacker in mind.\n",
			sum.Security, plural(sum.Security), map[bool]string{true: "it", false: "them"}[sum.Security == 1])
	}
	for _, l := range judgeSummary(p) {
		fmt.Fprintf(&head, "\n> [!WARNING]\n> %s\n", l)
	}

	var servers []*plan.ServerPlan
	longest := ""
	for _, s := range p.Servers {
		if s.Action == plan.NoOp && s.Error == "" && s.VersionError == "" {
			continue
		}
		servers = append(servers, s)
		if a := mdText(clip(s.Addr)); len(a) > len(longest) {
			longest = a
		}
	}
	lists := []mdList{
		{"\n| Server | Action | Changes | Required bump | Security-relevant | Rules |\n| --- | --- | --- | --- | ---: | --- |\n", nil, "table row"},
		{"\n### Errors\n\n", nil, "error"},
		{"\n### Notes\n\n", nil, "note"},
	}
	for _, s := range servers {
		lists[0].items = append(lists[0].items, serverRow(s))
	}
	for _, e := range p.Errors() {
		lists[1].items = append(lists[1].items, "- "+mdText(clip(e))+"\n")
	}
	for _, n := range p.Notes {
		lists[2].items = append(lists[2].items, "- "+mdText(clip(n))+"\n")
	}

	// The closing note is reserved at its longest: every count at its
	// total, the longest address in both places it may name one.
	worst := left{diffs: len(servers), of: len(servers), from: longest, cut: longest}
	for _, l := range lists {
		worst.items = append(worst.items, count{len(l.items), l.noun})
	}
	room := budget - len(worst.note(link))

	b := &budgeted{room: room}
	b.add(head.String())
	var out left
	for _, l := range lists {
		shown := 0
		for i, it := range l.items {
			if i == 0 {
				it = l.heading + it
			}
			if !b.add(it) {
				break
			}
			shown++
		}
		out.items = append(out.items, count{len(l.items) - shown, l.noun})
	}
	out.of = len(servers)
	summary := b.Len()
	for i, s := range servers {
		if b.full {
			out.diffs, out.from = len(servers)-i, mdText(clip(s.Addr))
			break
		}
		d := newDetails(s)
		if b.add(d.full()) {
			continue
		}
		// A diff that cannot fit beside the summary is cut to what room is
		// left; any other is left out whole, with every diff after it.
		if d.size() > room-summary {
			if cut, ok := d.cut(room - b.Len()); ok {
				b.WriteString(cut)
				out.cut = mdText(clip(s.Addr))
				i++
			}
		}
		if i < len(servers) {
			out.diffs, out.from = len(servers)-i, mdText(clip(servers[i].Addr))
		}
		break
	}
	if out.any() {
		b.force(out.note(link))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdList is a part of the summary whose items can be left out one by one
// from the end: the heading goes with the first item.
type mdList struct {
	heading string
	items   []string
	noun    string
}

// budgeted is the comment being built: add appends a part only while it
// fits in room, and after the first part that does not, no other.
type budgeted struct {
	strings.Builder
	room int
	full bool
}

func (b *budgeted) add(s string) bool {
	if b.full || b.Len()+len(s) > b.room {
		b.full = true
		return false
	}
	b.WriteString(s)
	return true
}

// force appends the closing note, whose room was reserved.
func (b *budgeted) force(s string) { b.WriteString(s) }

// serverRow is a server's table row.
func serverRow(s *plan.ServerPlan) string {
	sec := 0
	var grades [plan.Major + 1]int
	var rules []string
	seen := map[string]bool{}
	for _, c := range s.Changes {
		if c.Security {
			sec++
		}
		if c.Grade >= plan.None && c.Grade <= plan.Major {
			grades[c.Grade]++
		}
		if c.Rule != "" && !seen[c.Rule] {
			seen[c.Rule] = true
			rules = append(rules, ruleText(c.Rule))
		}
	}
	sort.Strings(rules)
	action := s.Action.String()
	if s.Error != "" || s.VersionError != "" {
		action += ", error"
	}
	changes := fmt.Sprint(len(s.Changes))
	var byGrade []string
	for g := plan.Major; g >= plan.None; g-- {
		if grades[g] > 0 {
			byGrade = append(byGrade, fmt.Sprintf("%d %s", grades[g], g))
		}
	}
	if len(byGrade) > 0 {
		changes += ": " + strings.Join(byGrade, ", ")
	}
	return fmt.Sprintf("| %s | %s | %s | %s | %d | %s |\n", mdText(clip(s.Addr)), action, changes, s.RequiredBump, sec, strings.Join(rules, ", "))
}

// ruleText is a rule id as code, as `mcpform explain` takes it; an id of
// other characters than the rules' (plan/rules.go) is escaped as text.
func ruleText(id string) string {
	for i := 0; i < len(id); i++ {
		if c := id[i]; !('A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
			return mdText(clip(id))
		}
	}
	return "`" + id + "`"
}

// details is one server's folded diff.
type details struct {
	open, fence, body string
	lines             int
}

func newDetails(s *plan.ServerPlan) details {
	var buf strings.Builder
	h := &human{w: bufio.NewWriter(&buf), pal: newPalette(false)}
	h.server(s)
	h.w.Flush()
	body := diffGlyphs(buf.String())
	if !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	what := fmt.Sprintf("%s: %s, %d change%s", htmlText(clip(s.Addr)), s.Action, len(s.Changes), plural(len(s.Changes)))
	sec := 0
	for _, c := range s.Changes {
		if c.Security {
			sec++
		}
	}
	if sec > 0 {
		what += fmt.Sprintf(", %d security-relevant", sec)
	}
	if s.Error != "" || s.VersionError != "" {
		what += ", error"
	}
	return details{
		open:  "\n<details><summary>" + what + "</summary>\n\n",
		fence: strings.Repeat("`", max(3, longestRun(body, '`')+1)),
		body:  body,
		lines: strings.Count(body, "\n"),
	}
}

func (d details) full() string {
	return d.open + d.fence + "diff\n" + d.body + d.fence + "\n\n</details>\n"
}

func (d details) size() int { return len(d.full()) }

// cut is the block with the longest run of whole lines of the diff that
// fits in room, the fence closed after them and a note saying so; false
// when not even one line fits.
func (d details) cut(room int) (string, bool) {
	note := func(n int) string {
		return fmt.Sprintf("_This diff is cut after %d of its %d lines to fit a comment._\n", n, d.lines)
	}
	fixed := len(d.open) + 2*len(d.fence) + len("diff\n") + len("\n\n") + len(note(d.lines)) + len("\n</details>\n")
	n, end := 0, 0
	for end < len(d.body) {
		next := strings.IndexByte(d.body[end:], '\n') + end + 1
		if fixed+next > room {
			break
		}
		end = next
		n++
	}
	if n == 0 {
		return "", false
	}
	return d.open + d.fence + "diff\n" + d.body[:end] + d.fence + "\n\n" + note(n) + "\n</details>\n", true
}

// left is what the comment leaves out.
type left struct {
	items     []count
	diffs, of int
	from, cut string // the first server whose diff is left out; the one cut
}

type count struct {
	n    int
	noun string
}

func (l left) any() bool {
	for _, c := range l.items {
		if c.n > 0 {
			return true
		}
	}
	return l.diffs > 0 || l.cut != ""
}

// note is the comment's closing note.
func (l left) note(link string) string {
	var parts []string
	if l.diffs > 0 {
		parts = append(parts, fmt.Sprintf("the diffs of %d of %d servers (from %s on)", l.diffs, l.of, l.from))
	}
	for _, c := range l.items {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s%s", c.n, c.noun, plural(c.n)))
		}
	}
	var b strings.Builder
	b.WriteString("\n---\n\n> [!NOTE]\n> ")
	switch {
	case len(parts) > 0:
		fmt.Fprintf(&b, "This comment leaves out %s to fit GitHub's comment limit.", and(parts))
		if l.cut != "" {
			fmt.Fprintf(&b, " The diff of %s is cut.", l.cut)
		}
	default:
		fmt.Fprintf(&b, "The diff of %s is cut to fit GitHub's comment limit.", l.cut)
	}
	if link != "" {
		fmt.Fprintf(&b, " For the full plan, see [the job's full output](%s).\n", link)
	} else {
		b.WriteString(" For the full plan, see the job's full output, or run `mcpform plan`.\n")
	}
	return b.String()
}

func and(parts []string) string {
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// plainURL reports whether s is an http(s) URL made only of characters
// that need no escaping in a markdown link destination, so that a strange
// CI variable cannot inject markup: otherwise the note names no link.
func plainURL(s string) bool {
	if len(s) > maxURL || !strings.HasPrefix(s, "https://") && !strings.HasPrefix(s, "http://") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-._~:/?#@!$&+,;=%", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// clipMax is the most bytes of one server string (an address, an error, a
// note) put in the summary; the diffs show them whole.
const clipMax = 1000

// clip shortens s to clipMax bytes at a rune boundary, marking the cut.
func clip(s string) string {
	if len(s) <= clipMax {
		return s
	}
	end := clipMax
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + "…"
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

// htmlText makes text safe inside an HTML element such as <summary>, where
// markdown is not read: hidden characters escaped, then HTML.
func htmlText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;").Replace(escape.String(s))
}
