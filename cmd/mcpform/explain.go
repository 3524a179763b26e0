package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/mcpform/mcpform/plan"
)

// explainFlags is mcpform explain's command line.
type explainFlags struct {
	rule string // "" lists every rule
}

func parseExplainFlags(args []string, stderr io.Writer) (explainFlags, error) {
	var f explainFlags
	fs := newFlagSet("explain", stderr, `Usage: mcpform explain [RULE]

Prints what a rule id in a plan means: its grade, drift class, whether it is
security-relevant, and an example. Without RULE, lists every rule.
`)
	if err := parseArgs(fs, args); err != nil {
		return f, err
	}
	rule, err := optionalArg(fs, stderr, "", "a rule id")
	// Ids are upper case; accept what a user types from memory.
	f.rule = strings.ToUpper(rule)
	return f, err
}

func runExplain(_ context.Context, io *stdio, f explainFlags) int {
	if f.rule == "" {
		for _, r := range plan.Rules() {
			fmt.Fprintf(io.out, "%-44s %-6s %-14s %s\n", r.ID, r.Grade, className(r), r.Summary)
		}
		return exitOK
	}
	r, ok := plan.LookupRule(f.rule)
	if !ok {
		fmt.Fprintf(io.err, "mcpform explain: no rule %q\n", f.rule)
		var ids []string
		for _, r := range plan.Rules() {
			ids = append(ids, r.ID)
		}
		if s := suggest(f.rule, ids); s != "" {
			fmt.Fprintf(io.err, "Did you mean %q?\n", s)
		}
		fmt.Fprintln(io.err, "Run \"mcpform explain\" for the list of rules.")
		return exitError
	}
	security := "no"
	if r.Security {
		security = "yes: read the change with an attacker in mind"
	}
	fmt.Fprintf(io.out, "%s: %s\n\n", r.ID, r.Summary)
	fmt.Fprintf(io.out, "  grade:              %s\n", r.Grade)
	fmt.Fprintf(io.out, "  class:              %s\n", className(r))
	fmt.Fprintf(io.out, "  security-relevant:  %s\n\n", security)
	fmt.Fprintf(io.out, "%s\n\n", r.Detail)
	fmt.Fprintf(io.out, "Example:\n  %s\n", r.Example)
	return exitOK
}

// className names a rule's class; gates have none.
func className(r plan.Rule) string {
	if r.Class == "" {
		return "gate"
	}
	return string(r.Class)
}
