package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/mcpform/mcpform/internal/escape"
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
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() != 1 {
		fs.Usage()
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
		fmt.Fprintf(io.err, "mcpform suggest-policy: server %q is not in %s\n", escape.String(name), *lockPath)
		return exitError
	}
	fmt.Fprint(io.out, taint.RenderHCL(name, taint.Suggest(e)))
	return exitOK
}
