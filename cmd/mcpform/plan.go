package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/mcpform/mcpform/approval"
	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/lang"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/plan"
	"github.com/mcpform/mcpform/plan/render"
)

// plan's exit codes with -detailed-exitcode (as terraform's).
const (
	planNoChanges = 0
	planChanges   = 2
)

// configFlags are the flags that shape evaluation of mcp.hcl and probing,
// shared by plan and apply.
type configFlags struct {
	varFlags
	targets         []string
	parallelism     int
	noColor         bool
	compactWarnings bool
	// trust is the trust file whose signers' approvals of the lock plan
	// reports and apply checks of a saved plan.
	trust string
	// input, lock and lockTimeout are terraform's flags of the same names,
	// which CI scripts written for terraform pass (-input=false,
	// -lock-timeout=5m); each command says what they mean for it.
	input       bool
	lock        bool
	lockTimeout time.Duration
}

// register adds the flags to fs. writes is set for apply, which writes
// mcp.lock and may ask for approval; for plan, which does neither, -input,
// -lock and -lock-timeout are accepted so that terraform's command lines
// work, and do nothing.
func (c *configFlags) register(fs *flag.FlagSet, writes bool) {
	c.varFlags.register(fs)
	fs.Func("target", "limit to a server, by name or address (repeatable)", func(s string) error {
		c.targets = append(c.targets, s)
		return nil
	})
	fs.IntVar(&c.parallelism, "parallelism", 10, "how many servers to probe at once")
	registerTrust(fs, &c.trust)
	fs.BoolVar(&c.noColor, "no-color", false, "never colour the output")
	fs.BoolVar(&c.compactWarnings, "compact-warnings", false, "show warnings about mcp.hcl in one line each")
	inputUse := "as terraform's; plan never asks for input: variables come from -var, -var-file and MCPFORM_VAR_*"
	lockUse := "as terraform's; plan takes no lock: it only reads mcp.lock, and apply checks a saved plan against the lock under the lock"
	timeoutUse := "as terraform's; plan takes no lock, so it waits for none"
	if writes {
		inputUse = "ask for approval on a terminal; -input=false never asks, so apply needs -auto-approve or a PLANFILE"
		lockUse = "only true: mcp.lock's lock is a kernel file lock that dies with its holder, never stale; a held lock means another apply is writing the lock now"
		timeoutUse = "how long to wait while another apply holds mcp.lock's lock (0s: fail at once, as terraform)"
	}
	fs.BoolVar(&c.input, "input", true, inputUse)
	fs.BoolVar(&c.lock, "lock", true, lockUse)
	fs.DurationVar(&c.lockTimeout, "lock-timeout", 0, timeoutUse)
}

type planFlags struct {
	configFlags
	out              string
	sarif            string
	json             bool
	markdown         bool
	detailedExitcode bool
}

func parsePlanFlags(args []string, stderr io.Writer) (planFlags, error) {
	var f planFlags
	fs := newFlagSet("plan", stderr, `Usage: mcpform plan [flags]

Probes every server of mcp.hcl and shows how the configuration and each live
surface differ from mcp.lock. Writes nothing but the -out file.
`)
	f.register(fs, false)
	fs.StringVar(&f.out, "out", "", "save the plan to FILE for mcpform apply FILE (not a plan with errors)")
	fs.StringVar(&f.sarif, "sarif", "", "also write the plan's definitional changes to FILE as SARIF 2.1.0, for code scanning")
	fs.BoolVar(&f.json, "json", false, "print the plan as JSON (see plan/render/JSON.md)")
	fs.BoolVar(&f.markdown, "markdown", false, "print the plan as markdown, for a pull-request comment")
	fs.BoolVar(&f.detailedExitcode, "detailed-exitcode", false, "exit 0 without changes, 1 on error, 2 with changes")
	if err := parseArgs(fs, args); err != nil {
		return f, err
	}
	if fs.NArg() > 0 {
		return f, usageFailure(fs, stderr, "mcpform plan takes no arguments (got %q); use -target NAME", fs.Arg(0))
	}
	if f.json && f.markdown {
		return f, usageFailure(fs, stderr, "mcpform plan: -json and -markdown cannot be used together")
	}
	return f, nil
}

func runPlan(ctx context.Context, io *stdio, f planFlags) int {
	p, cfg, code := makePlan(ctx, io, &f.configFlags)
	if p == nil {
		return code
	}
	if f.sarif != "" {
		if err := writeSARIF(f.sarif, p, cfg); err != nil {
			return fail(io, err)
		}
	}
	// As terraform, a plan with errors is not saved: apply would refuse it,
	// and a file from an earlier plan at f.out is left as it was.
	if f.out != "" && len(p.Errors()) == 0 {
		if err := plan.Save(f.out, p); err != nil {
			return fail(io, err)
		}
		if err := dropPlanSignatures(io, f.out); err != nil {
			return fail(io, err)
		}
	}
	var err error
	switch {
	case f.json:
		err = render.JSON(io.out, p)
	case f.markdown:
		err = render.MarkdownWithOptions(io.out, p, render.MarkdownOptions{FullOutputURL: render.JobURL(io.getenv)})
	default:
		err = render.Human(io.out, p, render.Options{Color: useColor(io, io.out, f.noColor), Errors: io.err, ErrorsColor: useColor(io, io.err, f.noColor)})
		switch {
		case err != nil || len(p.Errors()) > 0:
		case f.out != "":
			fmt.Fprintf(io.out, "\nSaved the plan to %s. To write exactly this plan to the lock, run:\n    mcpform apply %s\n", f.out, f.out)
		case p.HasChanges():
			// What next, as terraform says it (on stderr: stdout is the
			// plan): apply plans again, so what it writes is what the
			// servers say then.
			fmt.Fprint(io.err, "\nTo lock these changes after review, run mcpform apply (it plans again and asks before writing),\n"+
				"or save this exact plan with mcpform plan -out=FILE and apply it with mcpform apply FILE.\n")
		}
	}
	if err != nil {
		return fail(io, err)
	}
	if errs := p.Errors(); len(errs) > 0 {
		if f.json || f.markdown {
			// The human plan said them on stderr; say them there for the
			// machine forms too, so a CI log shows why plan failed.
			for _, e := range errs {
				first, _, _ := strings.Cut(e, "\n")
				fmt.Fprintf(io.err, "Error: %s\n", escape.Visible(first))
			}
		}
		if f.out != "" {
			fmt.Fprintf(io.err, "\nError: the plan was not saved: it had errors, so %s was not written. Fix them and run mcpform plan -out %s again.\n",
				escape.String(f.out), escape.String(f.out))
		}
		return exitError
	}
	if f.detailedExitcode && p.HasChanges() {
		return planChanges
	}
	return planNoChanges
}

// makePlan loads mcp.hcl and the lock, probes and diffs. On failure it has
// printed why and returns a nil plan and the exit code.
func makePlan(ctx context.Context, io *stdio, f *configFlags) (*plan.Plan, *lang.Config, int) {
	cfg, diags := lang.Load(".", f.options(io))
	writeLoadDiagnostics(io, diags, cfg.Files, useColor(io, io.err, f.noColor), f.compactWarnings)
	if diags.HasErrors() {
		return nil, nil, exitError
	}
	current, data, err := readLock(cfg.Lockfile)
	if err != nil {
		return nil, nil, fail(io, err)
	}
	writeLockNotes(io, current)
	if current != nil {
		// Who approved the lock the plan is against (never a reason not
		// to plan: a plan is how a lock is replaced).
		r, err := lockApprovals(io, f.trust, cfg.Lockfile, data)
		if err != nil {
			return nil, nil, fail(io, err)
		}
		noteApprovals(io, cfg.Lockfile, r)
	}
	if !checkTargets(io, f.targets, cfg, current) {
		return nil, nil, exitError
	}
	if len(f.targets) > 0 {
		fmt.Fprint(io.err, targetingWarning)
	}
	warnUnsetEnv(io, configEnv(cfg, f.targets), "probed")
	confine := newConfiner(io, cfg.Lockfile, defaultAuditPath(io))
	defer confine.Close()
	// Without a cache directory the plan of an npm server says so.
	npmCache, _ := npmCacheRoot(io.getenv)
	pypiCache, _ := pypiCacheRoot(io.getenv)
	progress := startProgress(io, 0)
	p, err := plan.Make(ctx, cfg, current, data, plan.Options{
		Targets:     f.targets,
		Parallelism: f.parallelism,
		Probing:     progress.expect,
		Progress:    progress.probe,
		OnPhase:     progress.phase,
		Prepare:     confine.hook,
		LookupEnv:   lookupEnv(io),
		OAuth:       oauthTokens(io),
		NPMCache:    npmCache,
		PyPICache:   pypiCache,
	})
	progress.Close()
	if err != nil {
		return nil, nil, fail(io, err)
	}
	if err := plan.Finish(p, current, "mcpform "+version); err != nil {
		return nil, nil, fail(io, err)
	}
	return p, cfg, exitOK
}

// writeSARIF writes the plan's SARIF log, pointing each result at its
// server's block in mcp.hcl.
func writeSARIF(path string, p *plan.Plan, cfg *lang.Config) error {
	locs := map[string]render.SARIFLocation{}
	for _, s := range cfg.Servers {
		locs[s.Name] = render.SARIFLocation{File: s.DeclRange.Filename, Line: s.DeclRange.Start.Line}
	}
	var buf bytes.Buffer
	if err := render.SARIFWithOptions(&buf, p, render.SARIFOptions{ToolVersion: version, Locations: locs}); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// readLock returns the verified lock and its bytes, or nils when there is
// no lock yet. A lock that does not verify is an error: plan never builds
// on a lock it cannot trust.
func readLock(path string) (*lock.File, []byte, error) {
	lf, data, err := lock.LoadBytes(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, nil
	case err != nil:
		return nil, nil, fmt.Errorf("%w\nRestore the lock from version control; mcpform will not plan against a lock it cannot verify", err)
	}
	return lf, data, err
}

// lookupEnv gives servers the values of the names they pass through. An
// empty value counts as unset.
func lookupEnv(io *stdio) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v := io.getenv(name)
		return v, v != ""
	}
}

// dropPlanSignatures removes the signatures of an earlier plan saved at
// path: they approved another planned lock, and apply would refuse them.
func dropPlanSignatures(io *stdio, path string) error {
	sigPath := approval.Path(path)
	if _, err := os.Lstat(sigPath); err != nil {
		return nil
	}
	fmt.Fprintf(io.err, "Note: removed %s: its signatures approved the plan saved there before.\n", sigPath)
	return os.Remove(sigPath)
}
