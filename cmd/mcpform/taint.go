package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/runtime/taint"
	taintrender "github.com/mcpform/mcpform/taint/render"
)

// runTaint is `mcpform taint list [-json]` and `mcpform taint reset
// SESSION|-all`: what a client session read from taint sources, and clearing
// it after review. It runs from a terminal, never through a client, so a
// model cannot clear its own taint.
func runTaint(ctx context.Context, io *stdio, args []string) int {
	usage := func() {
		fmt.Fprintln(io.err, "Usage: mcpform taint list [-json]")
		fmt.Fprintln(io.err, "       mcpform taint reset SESSION | -all")
		fmt.Fprintln(io.err, "\nShow which client sessions read from a taint source (and when, and what), or clear one after review.")
	}
	if len(args) == 0 {
		usage()
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage()
		return exitOK
	case "list":
		return withFlags(parseTaintListFlags, runTaintList)(ctx, io, args[1:])
	case "reset":
		return withFlags(parseTaintResetFlags, runTaintReset)(ctx, io, args[1:])
	}
	fmt.Fprintf(io.err, "mcpform taint: unknown subcommand %q\n", escape.String(args[0]))
	usage()
	return exitUsage
}

// openTaintStore opens the user's taint store for the subcommand sub, or
// says why it cannot and returns the exit code.
func openTaintStore(io *stdio, sub string) (*taint.Store, int) {
	dir, err := taint.DefaultDir(io.getenv)
	if err != nil {
		return nil, taintFailed(io, sub, err)
	}
	s, err := taint.Open(dir)
	if err != nil {
		return nil, taintFailed(io, sub, err)
	}
	return s, exitOK
}

// taintFailed says on stderr that taint's subcommand sub failed, and why.
func taintFailed(io *stdio, sub string, err error) int {
	fmt.Fprintf(io.err, "mcpform taint %s: %v\n", sub, err)
	return exitError
}

// taintListFlags is mcpform taint list's command line.
type taintListFlags struct {
	json bool
}

func parseTaintListFlags(args []string, stderr io.Writer) (taintListFlags, error) {
	var f taintListFlags
	fs := newFlagSet("taint list", stderr, `Usage: mcpform taint list [-json]

Lists the client sessions that read from a taint source: when, from which server and tool.
`)
	fs.BoolVar(&f.json, "json", false, "print the sessions as JSON")
	if err := parseArgs(fs, args); err != nil {
		return f, err
	}
	if fs.NArg() != 0 {
		return f, usageFailure(fs, stderr, "mcpform taint list takes no arguments (got %q)", escape.String(fs.Arg(0)))
	}
	return f, nil
}

func runTaintList(_ context.Context, io *stdio, f taintListFlags) int {
	s, code := openTaintStore(io, "list")
	if s == nil {
		return code
	}
	states, listErr := s.List()
	sessions := taintrender.Tainted(states)
	if f.json {
		taintrender.JSON(io.out, sessions)
	} else {
		taintrender.Human(io.out, sessions)
	}
	if listErr != nil {
		return taintFailed(io, "list", listErr)
	}
	return exitOK
}

// taintResetFlags is mcpform taint reset's command line: one session, or
// all.
type taintResetFlags struct {
	all     bool
	session string
}

func parseTaintResetFlags(args []string, stderr io.Writer) (taintResetFlags, error) {
	var f taintResetFlags
	const usage = "Usage: mcpform taint reset SESSION | -all\n"
	fs := newFlagSet("taint reset", stderr, usage)
	// The synopsis names the one flag: its help is that line alone.
	fs.Usage = func() { io.WriteString(stderr, usage) }
	fs.BoolVar(&f.all, "all", false, "clear every session")
	if err := parseArgs(fs, args); err != nil {
		return f, err
	}
	if f.all == (fs.NArg() == 1) || fs.NArg() > 1 {
		return f, usageFailure(fs, stderr, "mcpform taint reset takes one session, or -all")
	}
	f.session = strings.TrimSpace(fs.Arg(0))
	return f, nil
}

func runTaintReset(_ context.Context, io *stdio, f taintResetFlags) int {
	s, code := openTaintStore(io, "reset")
	if s == nil {
		return code
	}
	if f.all {
		n, err := s.ResetAll()
		if err != nil {
			return taintFailed(io, "reset", err)
		}
		taintrender.Cleared(io.out, n)
		return exitOK
	}
	if err := s.Reset(f.session); err != nil {
		return taintFailed(io, "reset", errors.New(escape.String(err.Error())))
	}
	taintrender.ClearedSession(io.out, f.session)
	return exitOK
}
