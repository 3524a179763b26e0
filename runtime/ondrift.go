package runtime

import (
	"fmt"
	"strings"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/internal/mutation"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/policy"
	"github.com/mcpform/mcpform/runtime/audit"
	"github.com/mcpform/mcpform/runtime/enforce"
)

// What the client may see of the lock (policy.expose), and what run does
// with definitional drift (policy.onDrift): quarantine the server (the
// default), block only the items that drifted, or serve the locked surface
// and warn.

// exposedEntry is e as the client may see it: without the items policy's
// expose leaves out. They stay in e, so verification still compares them
// with the live surface; the lists the client gets and the enforce checks
// see only this entry, so a hidden item is refused exactly as one the lock
// does not hold. Resource templates are matched by their uriTemplate
// against expose's resources patterns. e itself is returned when nothing is
// hidden.
func exposedEntry(e *lock.Entry) *lock.Entry {
	if e.Policy == nil || e.Policy.Expose == nil || mutation.Off("expose") {
		return e
	}
	x := e.Policy.Expose
	out := *e
	for _, k := range lock.Kinds {
		list := x.Tools
		switch k {
		case lock.Prompts:
			list = x.Prompts
		case lock.Resources, lock.ResourceTemplates:
			list = x.Resources
		}
		keep := []lock.Item{}
		for _, it := range e.List(k) {
			if policy.Exposes(list, it.Key) {
				keep = append(keep, it)
			}
		}
		out.SetList(k, keep)
	}
	return &out
}

// onDefinitional handles definitional drift as the entry's on_drift says;
// drifts are those of one comparison, def their descriptions.
func (p *proxy) onDefinitional(drifts []lock.Drift, def []string, when string) {
	what := strings.Join(def, ", ")
	switch mode := p.entry.Policy.OnDriftMode(); {
	case mode == policy.DriftInsecureWarn:
		// Said once for as long as it stays the same, as informational
		// drift is.
		if prev := p.lastDef.Swap(&what); prev != nil && *prev == what {
			return
		}
		msg := fmt.Sprintf("WARNING: the surface drifted from mcp.lock %s: %s. on_drift = %q: the locked surface is still served and nothing more is refused; run `mcpform plan` to review the change", when, what, policy.DriftInsecureWarn)
		p.warnf("%s", msg)
		_ = p.record(&audit.Record{Event: "drift", Outcome: "definitional", Detail: what + " (on_drift insecure-warn: served)"})
	case mode == policy.DriftBlockChanged && allItems(drifts):
		p.block(drifts, what, when)
	default:
		_ = p.record(&audit.Record{Event: "drift", Outcome: "definitional", Detail: what})
		p.setQuarantine(fmt.Sprintf("its surface drifted from mcp.lock %s: %s", when, what))
	}
}

// allItems reports whether every definitional drift is about one item: a
// changed instructions text or era is about the whole server, which
// block-changed still quarantines.
func allItems(drifts []lock.Drift) bool {
	for _, d := range drifts {
		if d.Class == lock.Definitional && !d.IsItem() {
			return false
		}
	}
	return true
}

// block adds the drifted items to the blocked set, for the rest of the
// run: the lists the client gets leave them out from now on, and requests
// about them are refused (the quarantine link). Told once per new set.
func (p *proxy) block(drifts []lock.Drift, what, when string) {
	if mutation.Off("blockchanged") {
		return
	}
	p.blockMu.Lock()
	defer p.blockMu.Unlock()
	old := p.state.blocked.Load()
	var items []lock.Drift
	for _, d := range drifts {
		if d.Class == lock.Definitional && d.IsItem() && !old.Has(d.Kind, d.Key) {
			items = append(items, d)
		}
	}
	if len(items) == 0 {
		return
	}
	next := old.Add(items)
	lists := newServed(next.Without(p.view)).lists
	p.blockedLists.Store(&lists)
	p.state.blocked.Store(next)
	var named []string
	for _, d := range items {
		named = append(named, describe(d))
	}
	msg := fmt.Sprintf("mcpform blocked what drifted from mcp.lock %s on server %q (on_drift = %q): %s; the rest of the locked surface is still served. Run `mcpform plan` to review the change (and `mcpform apply` to accept it)", when, escape.String(p.name), policy.DriftBlockChanged, strings.Join(named, ", "))
	p.logf("%s", msg)
	_ = p.record(&audit.Record{Event: "drift", Outcome: "definitional", Detail: what})
	_ = p.record(&audit.Record{Event: "block", Detail: msg})
	p.listsChanged()
}

// blockedRefusal is the quarantine link's check of one request against
// the blocked items.
func (s *serverState) blockedRefusal(c *enforce.Call, view *lock.Entry) *enforce.Refusal {
	return s.blocked.Load().Check(c, view)
}
