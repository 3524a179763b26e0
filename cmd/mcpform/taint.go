package main

import (
	"context"
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
func runTaint(_ context.Context, io *stdio, args []string) int {
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
		return runTaintList(io, args[1:])
	case "reset":
		return runTaintReset(io, args[1:])
	}
	fmt.Fprintf(io.err, "mcpform taint: unknown subcommand %q\n", escape.String(args[0]))
	usage()
	return exitUsage
}

func openTaintStore(io *stdio) (*taint.Store, error) {
	dir, err := taint.DefaultDir(io.getenv)
	if err != nil {
		return nil, err
	}
	return taint.Open(dir)
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

func runTaintList(io *stdio, args []string) int {
	f, err := parseTaintListFlags(args, io.err)
	if err != nil {
		return parseFailed(err)
	}
	s, err := openTaintStore(io)
	if err != nil {
		fmt.Fprintf(io.err, "mcpform taint list: %v\n", err)
		return exitError
	}
	states, listErr := s.List()
	sessions := taintrender.Tainted(states)
	if f.json {
		taintrender.JSON(io.out, sessions)
	} else {
		taintrender.Human(io.out, sessions)
	}
	if listErr != nil {
		fmt.Fprintf(io.err, "mcpform taint list: %v\n", listErr)
		return exitError
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

func runTaintReset(io *stdio, args []string) int {
	f, err := parseTaintResetFlags(args, io.err)
	if err != nil {
		return parseFailed(err)
	}
	s, err := openTaintStore(io)
	if err != nil {
		fmt.Fprintf(io.err, "mcpform taint reset: %v\n", err)
		return exitError
	}
	if f.all {
		n, err := s.ResetAll()
		if err != nil {
			fmt.Fprintf(io.err, "mcpform taint reset: %v\n", err)
			return exitError
		}
		taintrender.Cleared(io.out, n)
		return exitOK
	}
	if err := s.Reset(f.session); err != nil {
		fmt.Fprintf(io.err, "mcpform taint reset: %s\n", escape.String(err.Error()))
		return exitError
	}
	taintrender.ClearedSession(io.out, f.session)
	return exitOK
}
