package plan

import (
	"fmt"
	"strings"

	"github.com/mcpform/mcpform/lang"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/policy"
)

// on_drift and expose in a plan: a policy change that weakens what run
// enforces is security-relevant, every plan of a server under
// insecure-warn says so, and an expose pattern must match an item.

// weakenedPolicy marks out's CFG-POLICY-CHANGED security-relevant when the
// new policy guarantees less than the locked one: on_drift weakened
// (quarantine to block-changed or insecure-warn, block-changed to
// insecure-warn) or expose widened (an item of the live or locked surface
// the client could not see and now can). The detail says which.
func weakenedPolicy(out []Change, old, live *lock.Entry) []Change {
	for i := range out {
		if out[i].Rule != "CFG-POLICY-CHANGED" {
			continue
		}
		var why []string
		from, to := old.Policy.OnDriftMode(), live.Policy.OnDriftMode()
		if policy.DriftStrength(to) > policy.DriftStrength(from) {
			why = append(why, fmt.Sprintf("on_drift weakened from %q to %q", from, to))
		}
		if w := exposeWidened(old, live); len(w) > 0 {
			why = append(why, "expose widened to "+strings.Join(w, ", "))
		}
		if len(why) > 0 {
			out[i].Security = true
			out[i].Detail = strings.Join(why, "; ")
		}
	}
	return out
}

// exposeWidened names the items (of live and of old) that live's expose shows
// and old's hid.
func exposeWidened(old, live *lock.Entry) []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range []*lock.Entry{live, old} {
		for _, k := range lock.Kinds {
			for _, it := range e.List(k) {
				name := fmt.Sprintf("%s %q", k, it.Key)
				if seen[name] {
					continue
				}
				seen[name] = true
				if exposes(live.Policy, k, it.Key) && !exposes(old.Policy, k, it.Key) {
					out = append(out, name)
				}
			}
		}
	}
	if len(out) > 5 {
		out = append(out[:5], fmt.Sprintf("and %d more", len(out)-5))
	}
	return out
}

// exposes reports whether p's expose shows the item of kind k keyed key.
func exposes(p *policy.Policy, k lock.Kind, key string) bool {
	if p == nil || p.Expose == nil {
		return true
	}
	return policy.Exposes(exposeList(p.Expose, k), key)
}

func exposeList(x *policy.Expose, k lock.Kind) []string {
	switch k {
	case lock.Tools:
		return x.Tools
	case lock.Prompts:
		return x.Prompts
	}
	return x.Resources // resources and resource templates
}

// checkExpose refuses an expose pattern that matches no item of its kind,
// in the live surface or the lock: a typo would hide what it meant to
// show. The error says which item was likely meant.
func checkExpose(s *lang.Server, old, live *lock.Entry) error {
	x := s.Policy.Expose
	if x == nil {
		return nil
	}
	for _, f := range []struct {
		attr  string
		kinds []lock.Kind
		list  []string
	}{
		{"tools", []lock.Kind{lock.Tools}, x.Tools},
		{"prompts", []lock.Kind{lock.Prompts}, x.Prompts},
		{"resources", []lock.Kind{lock.Resources, lock.ResourceTemplates}, x.Resources},
	} {
		var names []string
		for _, e := range []*lock.Entry{live, old} {
			if e == nil {
				continue
			}
			for _, k := range f.kinds {
				for _, it := range e.List(k) {
					names = append(names, it.Key)
				}
			}
		}
		for _, p := range f.list {
			if matchesAny(p, names) {
				continue
			}
			hint := ""
			if c := lang.Suggest(p, names); c != "" {
				hint = fmt.Sprintf(" Did you mean %q?", c)
			}
			return fmt.Errorf("expose: the %s pattern %q matches none of the server's %s.%s Fix the expose block in mcp.hcl", f.attr, p, f.attr, hint)
		}
	}
	return nil
}

func matchesAny(pattern string, names []string) bool {
	for _, n := range names {
		if policy.Match(pattern, n) {
			return true
		}
	}
	return false
}

// insecureWarnNote is the warning every plan of a server under
// on_drift = "insecure-warn" carries.
func insecureWarnNote(sp *ServerPlan) []string {
	if sp.Entry == nil || sp.Entry.Policy.OnDriftMode() != policy.DriftInsecureWarn {
		return nil
	}
	return []string{fmt.Sprintf("warning: server %q has on_drift = %q: mcpform run serves its locked surface even when the live server drifted from it, and only logs the drift; the lock's guarantee is weakened (remove on_drift for the default, quarantine, or use \"block-changed\")", sp.Name, policy.DriftInsecureWarn)}
}
