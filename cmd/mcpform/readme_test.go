package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var updateREADME = flag.Bool("update-readme", false, "regenerate the CLI reference in ../../README.md")

const (
	readmePath = "../../README.md"
	refBegin   = "<!-- BEGIN CLI REFERENCE: generated from each command's -h by `go test ./cmd/mcpform -run TestREADME -update-readme`. Do not edit by hand. -->"
	refEnd     = "<!-- END CLI REFERENCE -->"
)

// cliReference is the README's CLI reference: the top-level usage, then
// every command of the table with its synopsis and its own -h output, so the
// README cannot name a flag the code does not have or miss one it has.
func cliReference(ctx context.Context) string {
	var b strings.Builder
	var top bytes.Buffer
	usage(&top)
	b.WriteString("```text\n" + top.String() + "```\n")
	for _, name := range commandNames() {
		b.WriteString("\n### `mcpform " + name + "`\n\n")
		b.WriteString(strings.TrimSuffix(table[name].synopsis, ".") + ".\n\n")
		help := strings.TrimRight(commandHelp(ctx, name), "\n")
		b.WriteString("```text\n" + help + "\n```\n")
	}
	return b.String()
}

func readme(t *testing.T) (before, ref, after string) {
	t.Helper()
	data, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	i, j := strings.Index(s, refBegin), strings.Index(s, refEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md has no %q … %q section", refBegin, refEnd)
	}
	return s[:i+len(refBegin)], s[i+len(refBegin) : j], s[j:]
}

// TestREADMEReference compares the README's CLI reference with what the
// commands print for -h. Run with -update-readme after changing a command.
func TestREADMEReference(t *testing.T) {
	before, ref, after := readme(t)
	want := "\n" + cliReference(context.Background())
	if *updateREADME {
		if err := os.WriteFile(readmePath, []byte(before+want+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(want, ref); diff != "" {
		t.Errorf("README.md's CLI reference is out of date: go test ./cmd/mcpform -run TestREADME -update-readme\n(-code +README):\n%s", diff)
	}
}

// codeRE finds code in markdown: fenced blocks (with their language) and
// inline spans.
var codeRE = regexp.MustCompile("(?s)```([a-z]*)\n(.*?)```|`([^`\n]+)`")

// invocationRE finds "mcpform [-chdir=DIR] COMMAND ARGS…" where a command
// starts: at the start of a line of code, after a shell prompt, after
// "cmd/" (go run ./cmd/mcpform) and after the inspector's --cli.
var invocationRE = regexp.MustCompile(`(?m)(?:^(?:\$ )?|cmd/|--cli |source <\()mcpform(?:[ \t]+-chdir[= ]\S+)?[ \t]+([a-z][a-z-]*)([^\n|;&)]*)`)

// commandCode returns the code of a codeRE match that holds commands:
// output blocks ("text") hold none, console blocks only their "$ " lines.
func commandCode(m []string) string {
	switch lang, block, span := m[1], m[2], m[3]; {
	case span != "":
		return span
	case lang == "text":
		return ""
	case lang == "console":
		var lines []string
		for _, l := range strings.Split(block, "\n") {
			if strings.HasPrefix(l, "$ ") {
				lines = append(lines, l)
			}
		}
		return strings.Join(lines, "\n")
	default:
		return block
	}
}

// TestREADMECommandsExist checks every command and flag the README shows in
// code outside the generated reference (the walk-through, CI, exit codes):
// each command must be in the table and each flag written after it must be
// one of that command's flags.
func TestREADMECommandsExist(t *testing.T) {
	before, _, after := readme(t)
	flags := map[string][]string{}
	for _, c := range allCommandFlags(context.Background()) {
		flags[c.Name] = c.Flags
	}
	seen := 0
	for _, m := range codeRE.FindAllStringSubmatch(before+after, -1) {
		code := commandCode(m)
		for _, inv := range invocationRE.FindAllStringSubmatch(code, -1) {
			cmd, rest := inv[1], inv[2]
			if _, ok := flags[cmd]; !ok {
				if cmd == "help" {
					continue
				}
				t.Errorf("README.md shows `mcpform %s`, which is not a command", cmd)
				continue
			}
			seen++
			for _, tok := range strings.Fields(rest) {
				if !regexp.MustCompile(`^-[a-z]`).MatchString(tok) {
					continue
				}
				name, _, _ := strings.Cut(tok, "=")
				if !slices.Contains(flags[cmd], name) {
					t.Errorf("README.md shows `mcpform %s %s`: %s has no flag %s", cmd, tok, cmd, name)
				}
			}
		}
	}
	if seen < 10 {
		t.Errorf("found only %d invocations in README.md: is the pattern broken?", seen)
	}
}

// TestREADMEExitCodes runs the cheap cases of the README's exit-code table.
// plan -detailed-exitcode and verify's drift codes are specified by the
// plan_* and verify scripts.
func TestREADMEExitCodes(t *testing.T) {
	dir := t.TempDir()
	unformatted := filepath.Join(dir, "mcp.hcl")
	if err := os.WriteFile(unformatted, []byte("server \"a\" {\ncommand=[\"x\"]\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"version"}, 0},
		{[]string{"no-such-command"}, 1},
		{[]string{"verify", "-lock", filepath.Join(dir, "missing.lock")}, 2},
		{[]string{"fmt", "-check", unformatted}, 3},
		{[]string{"client-config", "-lock", filepath.Join(dir, "missing.lock")}, 1},
		{[]string{"import", "-nope"}, 1},
		{[]string{"plan", "-nope", "-detailed-exitcode"}, 1},
		{[]string{"help", "plan"}, 0},
	} {
		var out bytes.Buffer
		io := &stdio{in: strings.NewReader(""), out: &out, err: &out, getenv: func(string) string { return "" }}
		if got := run(context.Background(), tc.args, io); got != tc.want {
			t.Errorf("mcpform %s: exit %d, want %d\n%s", strings.Join(tc.args, " "), got, tc.want, out.String())
		}
	}
}
