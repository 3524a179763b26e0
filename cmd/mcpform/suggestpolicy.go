package main

import (
	"context"
	"fmt"
	"io"

	"github.com/mcpform/mcpform/lang"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/runtime/taint"
)

// suggestPolicyFlags is mcpform suggest-policy's command line.
type suggestPolicyFlags struct {
	lockPath string
	name     string
}

func parseSuggestPolicyFlags(args []string, stderr io.Writer) (suggestPolicyFlags, error) {
	var f suggestPolicyFlags
	fs := newFlagSet("suggest-policy", stderr, `Usage: mcpform suggest-policy [-lock FILE] NAME

Print an HCL taint block for the locked server NAME from its tools' annotations (missing hints count as open world and may write). Review it before pasting it into mcp.hcl.
`)
	fs.StringVar(&f.lockPath, "lock", lock.DefaultPath, "the mcp.lock to read")
	if err := parseArgs(fs, args); err != nil {
		return f, err
	}
	if fs.NArg() != 1 {
		return f, usageFailure(fs, stderr, "mcpform suggest-policy takes one argument, a server name of the lock")
	}
	f.name = fs.Arg(0)
	return f, nil
}

// runSuggestPolicy is `mcpform suggest-policy [-lock FILE] NAME`: a starting
// taint block from the server's own annotations, printed for review. It
// never edits a file: annotations are the server's claims, and applying
// them on their own would let a server label itself harmless.
func runSuggestPolicy(_ context.Context, io *stdio, f suggestPolicyFlags) int {
	lf, err := lock.Load(f.lockPath)
	if err != nil {
		fmt.Fprintf(io.err, "mcpform suggest-policy: %v\n", err)
		return exitError
	}
	e, ok := lockedServer(io, "mcpform suggest-policy", lf, f.name, f.lockPath)
	if !ok {
		return exitError
	}
	name := f.name
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
