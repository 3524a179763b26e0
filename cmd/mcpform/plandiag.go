package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/lang"
	"github.com/mcpform/mcpform/lock"
)

// targetingWarning is said on stderr whenever -target narrows a plan, as
// terraform's "Resource targeting is in effect".
const targetingWarning = `
Warning: Targeting is in effect

You are creating a plan with -target, so it covers only the servers named:
the others are not probed, and their changes (and their removal from mcp.hcl)
are not in it. apply keeps their lock entries as they are.

The -target option is not for routine use: it is for exceptional situations
such as a server that cannot be probed right now.

`

// writeLoadDiagnostics prints what lang.Load found, on stderr. With
// compact, warnings are one line each after the errors, as terraform's
// -compact-warnings prints them.
func writeLoadDiagnostics(io *stdio, diags hcl.Diagnostics, files map[string][]byte, color, compact bool) {
	if len(diags) == 0 {
		return
	}
	if !compact {
		lang.WriteDiagnostics(io.err, diags, files, color, 0)
		return
	}
	var errs, warns hcl.Diagnostics
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			errs = append(errs, d)
		} else {
			warns = append(warns, d)
		}
	}
	if len(errs) > 0 {
		lang.WriteDiagnostics(io.err, errs, files, color, 0)
	}
	if len(warns) == 0 {
		return
	}
	fmt.Fprintln(io.err, "\nWarnings:")
	for _, w := range warns {
		fmt.Fprintf(io.err, "\n- %s\n", escape.String(w.Summary))
		if w.Subject != nil {
			fmt.Fprintf(io.err, "  on %s line %d\n", escape.String(w.Subject.Filename), w.Subject.Start.Line)
		}
	}
	fmt.Fprintln(io.err, "\nTo see the full warning notes, run mcpform without -compact-warnings.")
}

// checkTargets refuses a -target that names no server of the configuration
// or the lock, with the closest name as a suggestion. plan.Make refuses
// one too; checking here first is what can say "did you mean".
func checkTargets(io *stdio, targets []string, cfg *lang.Config, current *lock.File) bool {
	var known []string
	for _, s := range cfg.Servers {
		known = append(known, s.Name, s.Addr)
	}
	if current != nil {
		for name := range current.Servers {
			known = append(known, name, lockAddr(name))
		}
	}
	sort.Strings(known)
	ok := true
	for _, t := range targets {
		if slices.Contains(known, t) {
			continue
		}
		ok = false
		fmt.Fprintf(io.err, "Error: -target %q names no server of the configuration or the lock", escape.String(t))
		if s := suggest(t, known); s != "" {
			fmt.Fprintf(io.err, "; did you mean %q?", s)
		}
		fmt.Fprintln(io.err)
	}
	return ok
}

// lockAddr is the address of a lock name, "github.issues" →
// "module.github.server.issues", as plan shows it.
func lockAddr(name string) string {
	parts := strings.Split(name, ".")
	var b strings.Builder
	for _, m := range parts[:len(parts)-1] {
		b.WriteString("module." + m + ".")
	}
	b.WriteString("server." + parts[len(parts)-1])
	return b.String()
}

// serverEnv is the env list of one server, for warnUnsetEnv.
type serverEnv struct {
	name string
	env  []string
}

// configEnv is the env lists of cfg's servers, those of targets only when
// there are targets.
func configEnv(cfg *lang.Config, targets []string) []serverEnv {
	var out []serverEnv
	for _, s := range cfg.Servers {
		if len(targets) > 0 && !slices.Contains(targets, s.Name) && !slices.Contains(targets, s.Addr) {
			continue
		}
		out = append(out, serverEnv{s.Name, s.Env})
	}
	return out
}

// warnUnsetEnv prints one warning per name a server's env lists that is
// not set (or empty) in mcpform's environment, so the server is probed or
// started (verb) without it: a server that needs a token otherwise fails
// later, or starts and answers without it. When a set name is a likely
// typo's target, the warning asks "did you mean" it. Each warning is one
// line, with or without -compact-warnings.
func warnUnsetEnv(io *stdio, servers []serverEnv, verb string) {
	var set []string
	if io.environ != nil {
		for _, kv := range io.environ() {
			if name, value, ok := strings.Cut(kv, "="); ok && name != "" && value != "" {
				set = append(set, name)
			}
		}
		sort.Strings(set)
	}
	for _, s := range servers {
		// A name with a likely typo gets a line of its own; the other
		// unset names of a server share one.
		var unset []string
		for _, name := range s.env {
			if io.getenv(name) != "" {
				continue
			}
			if c := suggestEnv(name, set, s.env); c != "" {
				fmt.Fprintf(io.err, "Warning: server %q: %s is listed in env but not set; %s without it. Did you mean %s, which is set?\n",
					escape.String(s.name), escape.String(name), verb, escape.String(c))
				continue
			}
			unset = append(unset, escape.String(name))
		}
		switch len(unset) {
		case 0:
		case 1:
			fmt.Fprintf(io.err, "Warning: server %q: %s is listed in env but not set; %s without it\n", escape.String(s.name), unset[0], verb)
		default:
			fmt.Fprintf(io.err, "Warning: server %q: %s and %s are listed in env but not set; %s without them\n",
				escape.String(s.name), strings.Join(unset[:len(unset)-1], ", "), unset[len(unset)-1], verb)
		}
	}
}

// suggestEnv returns the set name closest to name, at most two edits away
// and fewer edits than name has letters (so TZ does not suggest PS), that
// the server does not list already; "" when there is none.
func suggestEnv(name string, set, listed []string) string {
	best, bestD := "", 3
	for _, c := range set {
		if c == name || slices.Contains(listed, c) {
			continue
		}
		if d := lang.EditDistance(name, c); d < bestD && d < len(name) {
			best, bestD = c, d
		}
	}
	return best
}
