package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/mcpform/mcpform/runtime/audit"
)

// auditFlags is mcpform audit verify's command line.
type auditFlags struct {
	path string // "": the log mcpform run writes
}

func parseAuditFlags(args []string, stderr io.Writer) (auditFlags, error) {
	var f auditFlags
	fs := newFlagSet("audit verify", stderr, `Usage: mcpform audit verify [FILE]

Check the audit log's hash chain (default: the log mcpform run writes).
Exit status: 0 intact, 1 broken, unreadable or a usage error.
`)
	if len(args) == 0 || args[0] != "verify" {
		if len(args) > 0 && isHelpFlag(args[0]) {
			fs.Usage()
			return f, flag.ErrHelp
		}
		return f, usageFailure(fs, stderr, "mcpform audit has one subcommand, verify")
	}
	if err := parseArgs(fs, args[1:]); err != nil {
		return f, err
	}
	if fs.NArg() > 1 {
		return f, usageFailure(fs, stderr, "mcpform audit verify takes at most one argument, the log's path")
	}
	f.path = fs.Arg(0)
	return f, nil
}

// runAudit is `mcpform audit verify [FILE]`: it checks the audit log's hash
// chain and names the first broken record.
func runAudit(_ context.Context, io *stdio, flags auditFlags) int {
	path := flags.path
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
