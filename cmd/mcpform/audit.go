package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/mcpform/mcpform/runtime/audit"
)

// runAudit is `mcpform audit verify [FILE]`: it checks the audit log's hash
// chain and names the first broken record.
func runAudit(_ context.Context, io *stdio, args []string) int {
	usage := func() {
		fmt.Fprintln(io.err, "Usage: mcpform audit verify [FILE]")
		fmt.Fprintln(io.err)
		fmt.Fprintln(io.err, "Check the audit log's hash chain (default: the log mcpform run writes).")
		fmt.Fprintln(io.err, "Exit status: 0 intact, 1 broken, unreadable or a usage error.")
	}
	if len(args) == 0 || args[0] != "verify" {
		usage()
		return exitUsage
	}
	fs := flag.NewFlagSet("audit verify", flag.ContinueOnError)
	fs.SetOutput(io.err)
	fs.Usage = usage
	if err := parseArgs(fs, args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 1 {
		usage()
		return exitUsage
	}
	path := fs.Arg(0)
	if path == "" {
		p, err := audit.DefaultPath(io.getenv)
		if err != nil {
			fmt.Fprintf(io.err, "mcpform audit verify: %v\n", err)
			return exitError
		}
		path = p
	}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(io.err, "mcpform audit verify: there is no audit log at %s: `mcpform run` writes it (there, or where its -audit says) once a client starts a server through it\n", path)
		return exitError
	}
	if err != nil {
		fmt.Fprintf(io.err, "mcpform audit verify: %v\n", err)
		return exitError
	}
	defer f.Close()
	n, err := audit.Verify(f)
	var ce *audit.ChainError
	switch {
	case errors.As(err, &ce):
		fmt.Fprintf(io.err, "mcpform audit verify: %s: the chain is broken at record %d (line %d): %s\n", path, ce.Line, ce.Line, ce.Msg)
		return exitError
	case err != nil:
		fmt.Fprintf(io.err, "mcpform audit verify: %s: %v\n", path, err)
		return exitError
	}
	fmt.Fprintf(io.out, "%s: %d records, chain intact\n", path, n)
	return exitOK
}
