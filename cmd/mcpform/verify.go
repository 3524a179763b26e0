package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"slices"
	"sort"

	"github.com/mcpform/mcpform/approval"
	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/lock"
	lockrender "github.com/mcpform/mcpform/lock/render"
	"github.com/mcpform/mcpform/mcp"
	"github.com/mcpform/mcpform/pins"
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
	trust       string
	strict      bool
	json        bool
	parallelism int
	names       []string
	// surfaces are the -surface arguments, NAME=PATH or PATH, in order.
	surfaces []string
}

func parseVerifyFlags(args []string, stderr io.Writer) (verifyFlags, error) {
	var f verifyFlags
	fs := newFlagSet("verify", stderr, `Usage: mcpform verify [-lock FILE] [-strict] [-json] [-parallelism N] [-surface [NAME=]PATH]... [NAME...]

Probes every locked server (or the NAMEs) with its locked argv, env names and era
and compares the live surface with mcp.lock. Needs no mcp.hcl: it is the CI gate.
Each server is started as mcpform run starts it: its pinned files checked first (a
changed one is drift, and the server is not started), an npm server from its pinned
tree in mcpform's cache.

Exit codes: 0 in sync (informational drift is reported), 1 definitional drift
(informational too with -strict), 2 lock missing, unreadable or tampered,
3 a server could not be started or probed. A usage error exits 1, as in every command.

It reports who approved the lock (mcp.lock.sig, made with mcpform sign). Signatures
that do not verify are tampering (exit 2); with a trust policy in force (-trust,
$MCPFORM_TRUST, ~/.config/mcpform/trust.hcl, /etc/mcpform/trust.hcl), so is a lock
without as many approvals as it requires, and nothing is probed.

-surface checks a surface captured elsewhere instead, starting nothing: PATH is
a saved tools/list (or prompts/list, resources/list, resources/templates/list)
response, its bare result, or a bare tools array, or a directory of tools.json,
prompts.json, resources.json and resource-templates.json. Lists not saved, and
everything but the lists, are taken as locked. Only the servers given a surface
are checked; -surface PATH without a NAME needs one server (one NAME argument,
or a lock of one server).
`)
	fs.StringVar(&f.lock, "lock", lock.DefaultPath, "the lock file to verify")
	registerTrust(fs, &f.trust)
	fs.BoolVar(&f.strict, "strict", false, "fail on informational drift too")
	fs.BoolVar(&f.json, "json", false, "print the report as JSON")
	fs.IntVar(&f.parallelism, "parallelism", 10, "how many servers to probe at once")
	fs.Func("surface", "check the saved surface at PATH against the server's lock entry, starting nothing: -surface [NAME=]PATH (repeatable)", func(s string) error {
		if s == "" {
			return errors.New("-surface needs a PATH, or NAME=PATH")
		}
		f.surfaces = append(f.surfaces, s)
		return nil
	})
	if err := parseArgs(fs, args); err != nil {
		return f, err
	}
	f.names = fs.Args()
	return f, nil
}

func runVerify(ctx context.Context, io *stdio, f verifyFlags) int {
	lf, data, names, err := loadLockServers(f.lock, f.names)
	if err != nil {
		fail(io, err)
		return verifyLockProblem
	}
	writeLockNotes(io, lf)
	approvals, err := lockApprovals(io, f.trust, f.lock, data)
	if err != nil {
		fail(io, err)
		return verifyLockProblem
	}
	if refused(approvals) {
		// Nothing is probed: a lock nobody approved is not the CI gate's
		// to check against.
		fail(io, approvalError(f.lock, approvals))
		rep := lockrender.VerifyReport{FormatVersion: lockrender.VerifyFormatVersion, Lock: f.lock, Approvals: verifyApprovals(approvals), Servers: []lockrender.VerifyServer{}, ExitCode: verifyLockProblem}
		if f.json {
			lockrender.VerifyJSON(io.out, rep)
		}
		return verifyLockProblem
	}
	if len(f.surfaces) > 0 {
		return verifySaved(io, f, lf, names, approvals)
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
	var reports []lockrender.VerifyServer
	movedAuth := map[string]bool{} // OAuth servers that name another authorization now
	confine := newConfiner(io, f.lock, defaultAuditPath(io))
	defer confine.Close()
	cache := pinCache(io.getenv)
	for _, name := range names {
		// The server as run starts it: its pinned code, checked first.
		e, err := launchable(ctx, io.getenv, lf.Servers[name], dir)
		if err != nil {
			reports = append(reports, lockrender.VerifyServer{Name: name, Status: lockrender.Failed, Drift: []lockrender.VerifyDrift{}, Error: err.Error(), DidNotStart: true})
			continue
		}
		if rep, ok := checkPins(name, e, dir, cache); !ok {
			reports = append(reports, rep)
			continue
		}
		t := plan.TargetFromEntry(name, e, dir)
		t.LookupEnv = lookupEnv(io)
		prepare, err := confine.hook(name, e.Policy)
		if err != nil {
			reports = append(reports, lockrender.VerifyServer{Name: name, Status: lockrender.Failed, Error: err.Error()})
			continue
		}
		t.Prepare = prepare
		if r := t.Remote; r != nil && r.Auth != nil && r.Auth.OAuth {
			// The login's tokens, and whether the server still names the
			// authorization the lock pins.
			live := *r
			live.Auth = r.Auth.Configured()
			if t.OAuth, err = oauthTokens(io)(ctx, name, &live); err != nil {
				reports = append(reports, lockrender.VerifyServer{Name: name, Status: lockrender.Failed, Drift: []lockrender.VerifyDrift{}, Error: err.Error()})
				continue
			}
			if !reflect.DeepEqual(live.Auth.Authorization(), r.Auth.Authorization()) {
				movedAuth[name] = true
			}
		}
		targets = append(targets, t)
	}
	progress := startProgress(io, len(targets))
	for i := range targets {
		targets[i].OnPhase = progress.phaseOf(targets[i].Name)
	}
	results := plan.ProbeAll(ctx, targets, f.parallelism, progress.probe)
	progress.Close()
	for _, r := range results {
		rep := verifyServer(r, lf.Servers[r.Name], f.strict)
		if movedAuth[r.Name] && rep.Status != lockrender.Failed {
			rep.Status = lockrender.Drift
			rep.Drift = append([]lockrender.VerifyDrift{{Class: lock.Definitional.String(), Action: "~", Field: "authorization"}}, rep.Drift...)
			addFindings(&rep, lf.Servers[r.Name], ruleChange("MCP-AUTHORIZATION-CHANGED", plan.ServerAddr(r.Name)+".authorization"))
		}
		reports = append(reports, rep)
	}
	return printVerify(io, f, approvals, reports)
}

// printVerify prints the report of every server, in name order, and
// returns verify's exit code for it.
func printVerify(io *stdio, f verifyFlags, approvals *approval.Report, reports []lockrender.VerifyServer) int {
	sort.Slice(reports, func(i, j int) bool { return reports[i].Name < reports[j].Name })
	rep := lockrender.VerifyReport{FormatVersion: lockrender.VerifyFormatVersion, Lock: f.lock, Approvals: verifyApprovals(approvals), Servers: reports, ExitCode: verifyCode(reports)}
	if f.json {
		lockrender.VerifyJSON(io.out, rep)
	} else {
		lockrender.Verify(io.out, rep)
	}
	return rep.ExitCode
}

// checkPins compares the files e's command starts with the lock's pins,
// as run does before each start. A file that is not the pinned one is
// definitional drift (plan shows it as PKG-EXECUTABLE-CHANGED or
// PKG-SCRIPT-CHANGED, and run refuses to start the server), and the
// server is not probed: ok is false and rep says what changed.
func checkPins(name string, e *lock.Entry, dir string, cache *pins.Cache) (rep lockrender.VerifyServer, ok bool) {
	if e.Remote != nil || e.Mcpform == nil {
		return rep, true
	}
	err := pins.Check(e.Mcpform.Pins, e.Command, dir, cache)
	if err == nil {
		return rep, true
	}
	var m *pins.Mismatch
	if !errors.As(err, &m) {
		return lockrender.VerifyServer{Name: name, Status: lockrender.Failed, Drift: []lockrender.VerifyDrift{}, Error: err.Error(), DidNotStart: true}, false
	}
	rep = lockrender.VerifyServer{Name: name, Status: lockrender.Drift, Error: m.Error(),
		Drift: []lockrender.VerifyDrift{{Class: lock.Definitional.String(), Action: "~", Field: "pins." + m.What}}}
	addFindings(&rep, e, ruleChange(m.Rule(), plan.ServerAddr(name)+".pins."+m.What))
	return rep, false
}

// ruleChange is a change at addr graded by its rule, for the drift verify
// finds before (pins) or beside (authorization) the surface's.
func ruleChange(rule, addr string) plan.Change {
	r, _ := plan.LookupRule(rule)
	return plan.Change{Addr: addr, Action: plan.Update, Rule: rule, Grade: r.Grade, Class: r.Class, Security: r.Security}
}

// verifyServer is the verdict on one probed server: in sync, drifted
// (definitional drift, or any with -strict) or failed.
func verifyServer(r plan.Result, locked *lock.Entry, strict bool) lockrender.VerifyServer {
	if r.Err != nil {
		return lockrender.VerifyServer{Name: r.Name, Status: lockrender.Failed, Drift: []lockrender.VerifyDrift{}, Error: r.Err.Error(),
			DidNotStart: errors.As(r.Err, new(*mcp.StartError))}
	}
	s := compareLive(r.Name, locked, r.Entry, strict)
	addSampleFindings(&s, r.Name, locked, r.Samples) // verify_samples.go
	return s
}

// compareLive is the verdict on a live entry, probed or saved.
func compareLive(name string, locked, live *lock.Entry, strict bool) lockrender.VerifyServer {
	diffs := lock.Compare(locked, live)
	s := lockrender.VerifyServer{Name: name, Status: lockrender.InSync, Drift: lockrender.DriftOf(diffs)}
	for _, d := range diffs {
		if d.Class == lock.Definitional || strict {
			s.Status = lockrender.Drift
		}
	}
	changes, _ := plan.DiffSurface(plan.ServerAddr(name), locked, live)
	addFindings(&s, locked, changes...)
	return s
}

// addFindings adds plan's graded changes to a server's report, and
// updates its required bump and the semver advice.
func addFindings(s *lockrender.VerifyServer, locked *lock.Entry, changes ...plan.Change) {
	bump := plan.None
	for _, f := range s.Findings {
		var g plan.Grade
		if f.Class == string(plan.Definitional) && g.UnmarshalText([]byte(f.Grade)) == nil {
			bump = max(bump, g)
		}
	}
	for _, c := range changes {
		s.Findings = append(s.Findings, lockrender.VerifyFinding{Address: c.Addr, Action: c.Action.String(), Rule: c.Rule,
			Grade: c.Grade.String(), Class: string(c.Class), Security: c.Security, Detail: c.Detail, Item: c.Item})
		if c.Class == plan.Definitional {
			bump = max(bump, c.Grade)
		}
	}
	s.RequiredBump = bump.String()
	if locked != nil && locked.Mcpform != nil {
		s.LockedVersion = locked.Mcpform.Version
	}
	s.SuggestedVersion = plan.SuggestVersion(s.LockedVersion, bump)
}

// verifyCode is verify's exit code for the report: a failure outweighs
// drift.
func verifyCode(reports []lockrender.VerifyServer) int {
	code := verifyInSync
	for _, r := range reports {
		switch {
		case r.Status == lockrender.Failed:
			code = verifyProbeFailure
		case r.Status == lockrender.Drift && code == verifyInSync:
			code = verifyDrift
		}
	}
	return code
}

// verifyApprovals is the report's form of r.
func verifyApprovals(r *approval.Report) *lockrender.VerifyApprovals {
	a := &lockrender.VerifyApprovals{State: string(r.State), Required: r.Required, Approvers: []string{}, TrustFile: r.Policy, Summary: r.Summary(), Problems: r.Problems()}
	for _, s := range r.Approvers {
		a.Approvers = append(a.Approvers, escape.String(s))
	}
	return a
}

// loadServers loads (and so verifies) the lock at path and returns it with
// the requested server names (all when none), refusing a name the lock
// does not hold: what show, verify and client-config start with.
func loadServers(path string, requested []string) (*lock.File, []string, error) {
	lf, _, names, err := loadLockServers(path, requested)
	return lf, names, err
}

// loadLockServers is loadServers with the lock's bytes, for checking its
// signatures over exactly the lock loaded.
func loadLockServers(path string, requested []string) (*lock.File, []byte, []string, error) {
	lf, data, err := lock.LoadBytes(path)
	if err != nil {
		return nil, nil, nil, err
	}
	var all []string
	for n := range lf.Servers {
		all = append(all, n)
	}
	sort.Strings(all)
	if len(requested) == 0 {
		return lf, data, all, nil
	}
	for _, n := range requested {
		if !slices.Contains(all, n) {
			msg := fmt.Sprintf("the lock has no server %q", n)
			if s := suggest(n, all); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
			}
			return nil, nil, nil, errors.New(msg)
		}
	}
	return lf, data, requested, nil
}
