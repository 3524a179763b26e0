package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"sort"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/lang"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/runtime/taint"
)

// runSuggestPolicy is `mcpform suggest-policy [-lock FILE] NAME`: a starting
// taint block from the server's own annotations, printed for review. It
// never edits a file: annotations are the server's claims, and applying
// them on their own would let a server label itself harmless.
func runSuggestPolicy(_ context.Context, io *stdio, args []string) int {
	fs := flag.NewFlagSet("suggest-policy", flag.ContinueOnError)
	fs.SetOutput(io.err)
	lockPath := fs.String("lock", lock.DefaultPath, "the mcp.lock to read")
	fs.Usage = func() {
		fmt.Fprintln(io.err, "Usage: mcpform suggest-policy [-lock FILE] NAME")
		fmt.Fprintln(io.err, "\nPrint an HCL taint block for the locked server NAME from its tools' annotations (missing hints count as open world and may write). Review it before pasting it into mcp.hcl.")
		fmt.Fprintln(io.err)
		fs.PrintDefaults()
	}
	if err := parseArgs(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() != 1 {
		usageFailure(fs, io.err, "mcpform suggest-policy takes one argument, a server name of the lock")
		return exitUsage
	}
	name := fs.Arg(0)
	lf, err := lock.Load(*lockPath)
	if err != nil {
		fmt.Fprintf(io.err, "mcpform suggest-policy: %v\n", err)
		return exitError
	}
	e, ok := lf.Servers[name]
	if !ok {
		var names []string
		for n := range lf.Servers {
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Fprintf(io.err, "mcpform suggest-policy: server %q is not in %s", escape.String(name), *lockPath)
		if s := suggest(name, names); s != "" {
			fmt.Fprintf(io.err, "; did you mean %q?", s)
		}
		fmt.Fprintln(io.err)
		return exitError
	}
	// Printed as mcpform fmt would write it, so that a pasted block
	// passes fmt -check as it is.
	src := taint.RenderHCL(name, taint.Suggest(e))
	out, diags := lang.Format([]byte(src), "suggest-policy")
	if diags.HasErrors() {
		fmt.Fprint(io.out, src)
		fmt.Fprintf(io.err, "mcpform suggest-policy: the suggestion does not format (a bug in mcpform): %s\n", diags.Error())
		return exitError
	}
	io.out.Write(out)
	return exitOK
}
