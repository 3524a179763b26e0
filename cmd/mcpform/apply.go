package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mcpform/mcpform/apply"
	"github.com/mcpform/mcpform/approval"
	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/lang"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/plan"
	"github.com/mcpform/mcpform/plan/render"
)

type applyFlags struct {
	configFlags
	autoApprove       bool
	requireSignatures bool
	planFile          string
}

func parseApplyFlags(args []string, stderr io.Writer) (applyFlags, error) {
	var f applyFlags
	fs := newFlagSet("apply", stderr, `Usage: mcpform apply [flags] [PLANFILE]

With PLANFILE (from mcpform plan -out), writes exactly that plan to mcp.lock and
refuses it if mcp.hcl or the lock changed since. Without, plans, shows the plan
and asks for "yes" (refused without a terminal or with -input=false, unless
-auto-approve). It waits -lock-timeout for another apply writing the lock.

Signatures made over a saved plan (mcpform sign PLANFILE, in PLANFILE.sig) must
verify, and apply carries them into mcp.lock.sig; -require-signatures refuses a
plan without as many approvals as the trust policy requires.
`)
	f.register(fs, true)
	fs.BoolVar(&f.autoApprove, "auto-approve", false, "write the lock without asking (for automation after review)")
	fs.BoolVar(&f.requireSignatures, "require-signatures", false, "refuse a saved plan that the trust policy's signers have not approved (mcpform sign PLANFILE)")
	if err := parseArgs(fs, args); err != nil {
		return f, err
	}
	var err error
	if f.planFile, err = optionalArg(fs, stderr, "", "a saved plan"); err != nil {
		return f, err
	}
	if !f.lock {
		// terraform's -lock=false is for a state lock left behind by a
		// process that died. mcp.lock's lock is flock(2) (LockFileEx on
		// Windows): the kernel drops it with its holder, so it is never
		// left behind, and writing without it could interleave two writes.
		return f, usageFailure(fs, stderr, "mcpform apply: -lock=false is not supported: the lock on mcp.lock is released by the kernel when its holder exits, so a held lock means another apply is writing it now; use -lock-timeout=DURATION to wait for it")
	}
	if f.requireSignatures && f.planFile == "" {
		return f, usageFailure(fs, stderr, "mcpform apply: -require-signatures checks a saved plan's approvals: save it with mcpform plan -out FILE, have it signed with mcpform sign FILE, then run mcpform apply -require-signatures FILE")
	}
	if f.lockTimeout < 0 {
		return f, usageFailure(fs, stderr, "mcpform apply: -lock-timeout must not be negative")
	}
	return f, nil
}

func runApply(ctx context.Context, io *stdio, f applyFlags) int {
	// Colour is decided per stream: the plan goes to stdout, diagnostics
	// and errors to stderr.
	color, errColor := useColor(io, io.out, f.noColor), useColor(io, io.err, f.noColor)
	var p *plan.Plan
	var planSigs []approval.Signature
	if f.planFile != "" {
		var err error
		if p, err = plan.ReadFile(f.planFile); err != nil {
			return fail(io, err)
		}
		cfg, diags := lang.Load(".", f.options(io))
		if diags.HasErrors() {
			lang.WriteDiagnostics(io.err, diags, cfg.Files, errColor, 0)
			return exitError
		}
		if plan.ConfigDigest(cfg) != p.ConfigDigest {
			fmt.Fprintf(io.err, "Error: the saved plan is stale: mcp.hcl (or a variable) changed since %s was made; run mcpform plan -out %s again\n", f.planFile, f.planFile)
			return exitError
		}
		if p.LockPath != cfg.Lockfile {
			// The plan file names the lock it writes; a plan edited to
			// write another file than mcp.hcl's lock is refused.
			fmt.Fprintf(io.err, "Error: %s would write %s, but mcp.hcl's lock is %s; run mcpform plan -out %s again\n", f.planFile, escape.String(p.LockPath), cfg.Lockfile, f.planFile)
			return exitError
		}
		if planSigs, err = planApprovals(io, f, p); err != nil {
			fmt.Fprintf(io.err, "Error: %v\nNothing was written.\n", err)
			return exitError
		}
	} else {
		var code int
		if p, _, code = makePlan(ctx, io, &f.configFlags); p == nil {
			return code
		}
		if err := render.Human(io.out, p, render.Options{Color: color, Errors: io.err, ErrorsColor: errColor}); err != nil {
			return fail(io, err)
		}
		if errs := p.Errors(); len(errs) > 0 {
			fmt.Fprintln(io.err, "\nError: the plan has errors; nothing was written.")
			return exitError
		}
		if !p.HasChanges() {
			return exitOK
		}
		if !f.autoApprove {
			if !f.input {
				fmt.Fprintln(io.err, "\nError: apply needs your approval, and -input=false forbids asking for it.")
				fmt.Fprintln(io.err, "Review the plan and pass -auto-approve, or save it with mcpform plan -out FILE")
				fmt.Fprintln(io.err, "and apply that file. Nothing was written.")
				return exitError
			}
			if !isTerminal(io.in) {
				fmt.Fprintln(io.err, "\nError: apply needs your approval, and there is no terminal to ask on.")
				fmt.Fprintln(io.err, "Review the plan and run mcpform apply in a terminal, or save it with")
				fmt.Fprintln(io.err, "mcpform plan -out FILE and apply that file, or pass -auto-approve.")
				return exitError
			}
			fmt.Fprint(io.out, "\nDo you want to write these changes to the lock?\n  Only 'yes' will be accepted to approve.\n\n  Enter a value: ")
			answer, _ := bufio.NewReader(io.in).ReadString('\n')
			if strings.TrimSpace(answer) != "yes" {
				fmt.Fprintln(io.err, "\nApply cancelled; the lock is unchanged.")
				return exitError
			}
		}
	}
	res, err := apply.ApplyWith(p, apply.Options{LockTimeout: f.lockTimeout})
	if errors.Is(err, lock.ErrLocked) {
		fmt.Fprintf(io.err, "Error: %v.\nmcp.lock is locked: another mcpform apply is writing it. Nothing was written; run apply again, or wait for the lock with -lock-timeout=DURATION (e.g. -lock-timeout=30s).\n", err)
		return exitError
	}
	if err != nil {
		return fail(io, err)
	}
	if err := carrySignatures(io, p, planSigs); err != nil {
		fmt.Fprintf(io.err, "Error: the lock was written, but its signatures were not: %v\nSign it again with mcpform sign.\n", err)
		return exitError
	}
	for _, n := range res.Notes {
		fmt.Fprintf(io.out, "Note: %s\n", n)
	}
	fmt.Fprintf(io.out, "\nApply complete! Servers: %d added, %d changed, %d removed.\n", res.Added, res.Changed, res.Removed)
	return exitOK
}

// planApprovals checks the signatures over a saved plan's lock (in
// PLANFILE.sig): any that does not verify refuses the plan, and with
// -require-signatures so does one the trust policy does not accept. It
// returns the signatures apply carries into the lock's signature file.
func planApprovals(io *stdio, f applyFlags, p *plan.Plan) ([]approval.Signature, error) {
	pol, err := trustPolicy(io, f.trust)
	if err != nil {
		return nil, err
	}
	if f.requireSignatures && pol == nil {
		return nil, fmt.Errorf("-require-signatures needs a trust policy that says whose approvals count: pass -trust FILE or set %s", approval.EnvTrust)
	}
	sigPath := approval.Path(f.planFile)
	r, err := approvals(pol, sigPath, p.PlannedLock)
	if err != nil {
		return nil, err
	}
	if r.State == approval.Invalid || f.requireSignatures && r.State != approval.Valid {
		return nil, approvalError("the lock planned in "+f.planFile, r)
	}
	if r.State != approval.Unsigned {
		fmt.Fprintf(io.out, "The planned lock is %s.\n", r.Summary())
	}
	sigs, err := approval.Load(sigPath)
	if err != nil {
		return nil, err
	}
	return sigs.Over(r.Digest), nil
}

// carrySignatures writes the signature file of the lock apply wrote: the
// saved plan's signatures, and those already there over the same lock
// (an apply that changed nothing). Signatures over the lock as it was are
// dropped, since they approved another lock.
func carrySignatures(io *stdio, p *plan.Plan, planSigs []approval.Signature) error {
	sigPath := approval.Path(p.LockPath)
	old, err := approval.Load(sigPath)
	if err != nil {
		old = &approval.File{}
	}
	payload, err := approval.Payload(p.PlannedLock)
	if err != nil {
		return err
	}
	digest := approval.Digest(payload)
	next := &approval.File{Version: approval.FileVersion, Signatures: old.Over(digest)}
	for _, s := range planSigs {
		next.Add(s)
	}
	if dropped := len(old.Signatures) - len(old.Over(digest)); dropped > 0 {
		fmt.Fprintf(io.out, "Note: %d signature(s) in %s approved the lock before this apply and were removed; have the new lock approved with mcpform sign.\n", dropped, sigPath)
	}
	if len(next.Signatures) == 0 && len(old.Signatures) == 0 {
		return nil
	}
	return approval.Save(sigPath, next)
}
