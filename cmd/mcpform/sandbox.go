package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/policy"
	"github.com/mcpform/mcpform/runtime"
	"github.com/mcpform/mcpform/runtime/audit"
	"github.com/mcpform/mcpform/runtime/confine"
	"github.com/mcpform/mcpform/runtime/sandbox"
	"github.com/mcpform/mcpform/runtime/taint"
)

// confiner builds the sandbox hooks of one command run: plan and verify
// probe a sandboxed server in the same sandbox run starts it in, so that
// what is reviewed is what runs.
type confiner struct {
	io       *stdio
	lockPath string
	// audit is opened on first use: only a sandboxed server with network
	// access needs it (for its egress proxy's records).
	auditPath string
	audit     *audit.Log
	ownAudit  bool
}

func newConfiner(io *stdio, lockPath, auditPath string) *confiner {
	return &confiner{io: io, lockPath: lockPath, auditPath: auditPath}
}

// hook returns the Prepare hook for a server, or nil without a sandbox
// policy.
func (c *confiner) hook(name string, p *policy.Policy) (func(*exec.Cmd) (func(), error), error) {
	if p == nil || p.Sandbox == nil {
		return nil, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, fmt.Errorf("server %q has a sandbox policy, and the home directory is unknown: %w", name, err)
	}
	protect, err := c.protected()
	if err != nil {
		return nil, err
	}
	conf := confine.Options{Name: name, Sandbox: p.Sandbox, Home: home, Protect: protect}
	if len(p.Sandbox.Network.Allow) > 0 {
		if c.audit == nil {
			if c.audit, err = audit.Open(c.auditPath); err != nil {
				return nil, fmt.Errorf("server %q: its egress proxy needs the audit log: %w", name, err)
			}
			c.ownAudit = true
		}
		conf.Egress = confine.EgressAuditor(c.audit, runtime.SessionID(), name, func(err error) {
			fmt.Fprintf(c.io.err, "mcpform: audit: %s\n", escape.String(err.Error()))
		})
	}
	return confine.Hook(conf), nil
}

// protected lists what no sandbox write path may cover: mcpform's state
// (sandbox.State). The home directory is protected by the sandbox itself.
func (c *confiner) protected() ([]string, error) {
	taintDir, _ := taint.DefaultDir(c.io.getenv)
	protect, err := sandbox.State{Lock: c.lockPath, Audit: c.auditPath, Taint: taintDir}.Protected()
	if err != nil {
		return nil, err
	}
	// The digests run trusts for unchanged pinned files.
	if d, err := stateDir(c.io.getenv); err == nil {
		protect = append(protect, filepath.Join(d, "pins"))
	}
	return protect, nil
}

// Close closes the audit log the confiner opened itself.
func (c *confiner) Close() {
	if c.audit != nil && c.ownAudit {
		c.audit.Close()
	}
}

// defaultAuditPath is the audit log's default location, or "" when the
// state directory is unknown.
func defaultAuditPath(io *stdio) string {
	p, err := audit.DefaultPath(io.getenv)
	if err != nil {
		return ""
	}
	return p
}

// explainSandbox prints what a server's sandbox would allow, from the lock,
// without starting anything: the expanded paths, the runtime base, the
// network destinations.
func explainSandbox(io *stdio, name string, e *lock.Entry, lockPath, auditPath, dir string) int {
	if e.Policy == nil || e.Policy.Sandbox == nil {
		fmt.Fprintf(io.out, "server %q has no sandbox policy in %s: mcpform run starts it unconfined (only its environment is withheld).\n", name, lockPath)
		fmt.Fprintln(io.out, "mcpform run reads only the lock: after adding a sandbox block to mcp.hcl, run mcpform plan and mcpform apply.")
		return exitOK
	}
	home, err := os.UserHomeDir()
	if err != nil {
		fmt.Fprintf(io.err, "mcpform run: %v\n", err)
		return exitError
	}
	c := newConfiner(io, lockPath, auditPath)
	protect, err := c.protected()
	if err != nil {
		fmt.Fprintf(io.err, "mcpform run: %v\n", err)
		return exitError
	}
	sb := e.Policy.Sandbox
	tmp, removeTmp, err := confine.PrivateTmp(sb)
	if err != nil {
		fmt.Fprintf(io.err, "mcpform run: %v\n", err)
		return exitError
	}
	defer removeTmp()
	spec, err := sandbox.SpecFromPolicy(sb, home, tmp, protect)
	if err != nil {
		fmt.Fprintf(io.err, "mcpform run: server %q: %v\n", name, err)
		return exitError
	}
	if spec.Network {
		spec.EgressSocket = "/tmp/mcpform-egress-XXXXXX/egress.sock"
	}
	cmd := exec.Command(e.Command[0], e.Command[1:]...)
	cmd.Dir = dir
	if lp, err := exec.LookPath(e.Command[0]); err == nil {
		cmd.Path = lp
	}
	grants, err := sandbox.Grants(cmd, spec)
	if err != nil {
		fmt.Fprintf(io.err, "mcpform run: server %q: %v\n", name, err)
		return exitError
	}
	w := io.out
	fmt.Fprintf(w, "server %q runs in a sandbox:\n", name)
	fmt.Fprintf(w, "  command    %s\n", escape.String(strings.Join(quoteAll(e.Command), " ")))
	fmt.Fprintf(w, "  namespaces user, mount, pid, network, ipc, uts, cgroup; no capabilities; no_new_privs; seccomp filter\n")
	fmt.Fprintln(w, "  view       a private root holding only the grants below (nothing else exists for the server);")
	fmt.Fprintln(w, "             all read-only but the read+write grants, nosuid; nothing it can write is executable")
	fmt.Fprintln(w, "             (noexec mounts; memfds sealed non-executable; no setuid or setgid bits); code it loads into")
	fmt.Fprintln(w, "             memory itself may run, as a JIT's does; Landlock enforces the same grants again")
	fmt.Fprintf(w, "  ${TMP}     a fresh private tmpfs per start (mounted on %s), also TMPDIR\n", tmp)
	fmt.Fprintln(w, "  filesystem (the runtime base, then the policy):")
	for _, g := range grants {
		fmt.Fprintf(w, "    %-13s %s\n", g.Access, escape.String(g.Path))
	}
	if len(sb.Network.Allow) == 0 {
		fmt.Fprintln(w, "  network    none: loopback only, no way out")
	} else {
		fmt.Fprintf(w, "  network    through mcpform's egress proxy (%s inside the sandbox), audited, to exactly:\n", sandbox.ProxyAddr)
		for _, a := range sb.Network.Allow {
			fmt.Fprintf(w, "    %s\n", escape.String(a))
		}
		fmt.Fprintln(w, "    (a name that resolves to a loopback, private or link-local address is refused unless that IP is listed)")
	}
	fmt.Fprintln(w, "  limits     (the sandbox block's limits, defaults where unset), and how this machine enforces them:")
	for _, l := range sandbox.LimitsInForce(spec.Limits) {
		fmt.Fprintf(w, "    %s\n", l)
	}
	if f := sandbox.Features(); f != "" {
		fmt.Fprintf(w, "  kernel     %s\n", f)
	}
	if err := sandbox.Supported(); err != nil {
		fmt.Fprintf(w, "\nThis machine cannot enforce it, so the server would not start: %s\n", escape.Visible(err.Error()))
		return exitError
	}
	return exitOK
}
