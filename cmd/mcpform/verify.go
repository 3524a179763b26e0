package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/mcp"
	"github.com/mcpform/mcpform/plan"
)

// verify's exit codes (README.md, "Exit codes").
const (
	verifyInSync       = 0
	verifyDrift        = 1
	verifyLockProblem  = 2
	verifyProbeFailure = 3
)

type verifyFlags struct {
	lock        string
	strict      bool
	json        bool
	parallelism int
	names       []string
}

func parseVerifyFlags(args []string, stderr io.Writer) (verifyFlags, error) {
	var f verifyFlags
	fs := newFlagSet("verify", stderr, `Usage: mcpform verify [-lock FILE] [-strict] [-json] [-parallelism N] [NAME...]

Probes every locked server (or the NAMEs) with its locked argv, env names and era
and compares the live surface with mcp.lock. Needs no mcp.hcl: it is the CI gate.

Exit codes: 0 in sync (informational drift is reported), 1 definitional drift
(informational too with -strict), 2 lock missing, unreadable or tampered,
3 a server could not be started or probed. A usage error exits 1, as in every command.
`)
	fs.StringVar(&f.lock, "lock", lock.DefaultPath, "the lock file to verify")
	fs.BoolVar(&f.strict, "strict", false, "fail on informational drift too")
	fs.BoolVar(&f.json, "json", false, "print the report as JSON")
	fs.IntVar(&f.parallelism, "parallelism", 10, "how many servers to probe at once")
	if err := parseArgs(fs, args); err != nil {
		return f, err
	}
	f.names = fs.Args()
	return f, nil
}

// serverReport is one server's line of the verify report; its JSON form is
// part of the documented -json output (format_version 1.0).
type serverReport struct {
	Name   string        `json:"name"`
	Status string        `json:"status"` // in_sync, drift, error
	Drift  []driftReport `json:"drift"`
	Error  string        `json:"error,omitempty"`
	// didNotStart marks an error that is a *mcp.StartError: the human
	// report's header then says "did not start", not "could not be
	// probed" (the JSON form's error says it already).
	didNotStart bool
}

type driftReport struct {
	Class  string `json:"class"`
	Action string `json:"action"`
	Field  string `json:"field"`
	Key    string `json:"key,omitempty"`
}

type verifyReport struct {
	FormatVersion string         `json:"format_version"`
	Lock          string         `json:"lock"`
	Servers       []serverReport `json:"servers"`
	ExitCode      int            `json:"exit_code"`
}

func runVerify(ctx context.Context, io *stdio, args []string) int {
	f, err := parseVerifyFlags(args, io.err)
	if err != nil {
		return parseFailed(err)
	}
	lf, names, err := loadServers(f.lock, f.names)
	if err != nil {
		fail(io, err)
		return verifyLockProblem
	}
	dir, err := filepath.Abs(filepath.Dir(f.lock))
	if err != nil {
		return fail(io, err)
	}
	var envs []serverEnv
	for _, name := range names {
		envs = append(envs, serverEnv{name, lf.Servers[name].EnvPassthrough})
	}
	warnUnsetEnv(io, envs, "probed")
	var targets []plan.Target
	var reports []serverReport
	confine := newConfiner(io, f.lock, defaultAuditPath(io))
	defer confine.Close()
	for _, name := range names {
		t := plan.TargetFromEntry(name, lf.Servers[name], dir)
		t.LookupEnv = lookupEnv(io)
		prepare, err := confine.hook(name, lf.Servers[name].Policy)
		if err != nil {
			reports = append(reports, serverReport{Name: name, Status: "error", Error: err.Error()})
			continue
		}
		t.Prepare = prepare
		targets = append(targets, t)
	}
	progress := startProgress(io, len(targets))
	for i := range targets {
		targets[i].OnPhase = progress.phaseOf(targets[i].Name)
	}
	results := plan.ProbeAll(ctx, targets, f.parallelism, progress.probe)
	progress.Close()
	for _, r := range results {
		rep := serverReport{Name: r.Name, Drift: []driftReport{}}
		if r.Err != nil {
			rep.Status, rep.Error = "error", r.Err.Error()
			rep.didNotStart = errors.As(r.Err, new(*mcp.StartError))
		} else {
			rep.Status = "in_sync"
			for _, d := range lock.Compare(lf.Servers[r.Name], r.Entry) {
				rep.Drift = append(rep.Drift, driftReport{Class: d.Class.String(), Action: string(d.Action), Field: d.Field, Key: d.Key})
				if d.Class == lock.Definitional || f.strict {
					rep.Status = "drift"
				}
			}
		}
		reports = append(reports, rep)
	}
	sort.Slice(reports, func(i, j int) bool { return reports[i].Name < reports[j].Name })
	code := verifyInSync
	for _, r := range reports {
		switch {
		case r.Status == "error":
			code = verifyProbeFailure
		case r.Status == "drift" && code == verifyInSync:
			code = verifyDrift
		}
	}
	if f.json {
		writeJSON(io.out, verifyReport{FormatVersion: "1.0", Lock: f.lock, Servers: reports, ExitCode: code})
		return code
	}
	printVerify(io.out, reports, code)
	return code
}

// loadServers loads (and so verifies) the lock at path and returns it with
// the requested server names (all when none), refusing a name the lock
// does not hold: what show, verify and client-config start with.
func loadServers(path string, requested []string) (*lock.File, []string, error) {
	lf, err := lock.Load(path)
	if err != nil {
		return nil, nil, err
	}
	var all []string
	for n := range lf.Servers {
		all = append(all, n)
	}
	sort.Strings(all)
	if len(requested) == 0 {
		return lf, all, nil
	}
	for _, n := range requested {
		if !slices.Contains(all, n) {
			msg := fmt.Sprintf("the lock has no server %q", n)
			if s := suggest(n, all); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
			}
			return nil, nil, errors.New(msg)
		}
	}
	return lf, requested, nil
}

func printVerify(w io.Writer, reports []serverReport, code int) {
	drifted, failed := 0, 0
	for _, r := range reports {
		switch r.Status {
		case "in_sync":
			if len(r.Drift) == 0 {
				fmt.Fprintf(w, "%s: in sync\n", r.Name)
			} else {
				fmt.Fprintf(w, "%s: in sync (informational drift only)\n", r.Name)
			}
		case "drift":
			drifted++
			fmt.Fprintf(w, "%s: drift\n", r.Name)
		case "error":
			failed++
			if r.didNotStart {
				fmt.Fprintf(w, "%s: did not start\n", r.Name)
			} else {
				fmt.Fprintf(w, "%s: could not be probed\n", r.Name)
			}
			for _, l := range strings.Split(r.Error, "\n") {
				fmt.Fprintf(w, "    %s\n", l)
			}
		}
		for _, d := range r.Drift {
			what := d.Field
			if d.Key != "" {
				what = singular(d.Field) + " " + escape.String(d.Key)
			}
			fmt.Fprintf(w, "  %s %-40s (%s)\n", d.Action, what, d.Class)
		}
	}
	fmt.Fprintln(w)
	switch code {
	case verifyInSync:
		fmt.Fprintf(w, "Verify passed: mcp.lock matches %s.\n", plural(len(reports), "server", "servers"))
	case verifyDrift:
		fmt.Fprintf(w, "Verify failed: %d of %s drifted from the lock. Run mcpform plan to review the changes.\n", drifted, plural(len(reports), "server", "servers"))
	case verifyProbeFailure:
		fmt.Fprintf(w, "Verify failed: %d of %s could not be probed", failed, plural(len(reports), "server", "servers"))
		if drifted > 0 {
			fmt.Fprintf(w, " and %d drifted", drifted)
		}
		fmt.Fprintln(w, ".")
	}
}

// singular names the item kind of a list field for messages.
func singular(field string) string {
	switch field {
	case "resourceTemplates":
		return "resource template"
	}
	return strings.TrimSuffix(field, "s")
}

func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
