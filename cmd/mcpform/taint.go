package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/runtime/taint"
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

// taintSession is one session as `taint list -json` prints it (format 1):
// the key and redeemed nonces stay in the store.
type taintSession struct {
	Session string        `json:"session"`
	Created time.Time     `json:"created"`
	Tainted bool          `json:"tainted"`
	Events  []taint.Event `json:"events"`
	Dropped int           `json:"dropped_events,omitempty"`
}

func runTaintList(io *stdio, args []string) int {
	fs := flag.NewFlagSet("taint list", flag.ContinueOnError)
	fs.SetOutput(io.err)
	asJSON := fs.Bool("json", false, "print the sessions as JSON")
	fs.Usage = func() {
		fmt.Fprintln(io.err, "Usage: mcpform taint list [-json]")
		fmt.Fprintln(io.err, "\nLists the client sessions that read from a taint source: when, from which server and tool.")
		fmt.Fprintln(io.err)
		fs.PrintDefaults()
	}
	if err := parseArgs(fs, args); err != nil {
		return exitUsage
	}
	if fs.NArg() != 0 {
		usageFailure(fs, io.err, "mcpform taint list takes no arguments (got %q)", escape.String(fs.Arg(0)))
		return exitUsage
	}
	s, err := openTaintStore(io)
	if err != nil {
		fmt.Fprintf(io.err, "mcpform taint list: %v\n", err)
		return exitError
	}
	states, listErr := s.List()
	out := []taintSession{}
	for _, st := range states {
		if !st.Tainted() {
			continue // a key without taint: nothing to review
		}
		out = append(out, taintSession{Session: st.Session, Created: st.Created, Tainted: true, Events: st.Events, Dropped: st.Dropped})
	}
	if *asJSON {
		data, _ := json.MarshalIndent(map[string]any{"format_version": "1", "sessions": out}, "", "  ")
		fmt.Fprintf(io.out, "%s\n", data)
	} else if len(out) == 0 {
		fmt.Fprintln(io.out, "No tainted sessions.")
	} else {
		for _, ts := range out {
			fmt.Fprintf(io.out, "%s  tainted %s\n", ts.Session, ts.Events[0].Time.Format(time.RFC3339))
			for _, ev := range ts.Events {
				what := escape.String(ev.Source)
				if ev.Item != "" && ev.Item != ev.Source {
					what += " " + escape.String(ev.Item)
				}
				fmt.Fprintf(io.out, "  %s  %s  %s  %s  pid %d\n", ev.Time.Format(time.RFC3339), escape.String(ev.Server), what, ev.Digest, ev.PID)
			}
			if ts.Dropped > 0 {
				fmt.Fprintf(io.out, "  (%d more events between the first and these)\n", ts.Dropped)
			}
		}
		fmt.Fprintln(io.out, "\nAfter reviewing a session, clear it with: mcpform taint reset SESSION")
	}
	if listErr != nil {
		fmt.Fprintf(io.err, "mcpform taint list: %v\n", listErr)
		return exitError
	}
	return exitOK
}

func runTaintReset(io *stdio, args []string) int {
	fs := flag.NewFlagSet("taint reset", flag.ContinueOnError)
	fs.SetOutput(io.err)
	all := fs.Bool("all", false, "clear every session")
	fs.Usage = func() { fmt.Fprintln(io.err, "Usage: mcpform taint reset SESSION | -all") }
	if err := parseArgs(fs, args); err != nil {
		return exitUsage
	}
	if *all == (fs.NArg() == 1) || fs.NArg() > 1 {
		usageFailure(fs, io.err, "mcpform taint reset takes one session, or -all")
		return exitUsage
	}
	s, err := openTaintStore(io)
	if err != nil {
		fmt.Fprintf(io.err, "mcpform taint reset: %v\n", err)
		return exitError
	}
	if *all {
		n, err := s.ResetAll()
		if err != nil {
			fmt.Fprintf(io.err, "mcpform taint reset: %v\n", err)
			return exitError
		}
		fmt.Fprintf(io.out, "Cleared %d session%s.\n", n, map[bool]string{true: "", false: "s"}[n == 1])
		return exitOK
	}
	name := strings.TrimSpace(fs.Arg(0))
	if err := s.Reset(name); err != nil {
		fmt.Fprintf(io.err, "mcpform taint reset: %s\n", escape.String(err.Error()))
		return exitError
	}
	fmt.Fprintf(io.out, "Cleared session %s.\n", name)
	return exitOK
}
