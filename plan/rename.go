package plan

import (
	"github.com/mcpform/mcpform/lock"
)

// renames finds the items the live surface renamed: a locked item gone
// and a live item new, of the same kind, that are equal in everything but
// their key (a tool's name, a resource's uri). It maps each kind's new key
// to its old one. Only a pair that matches no other removed or added item
// is a rename: two removed tools identical but for their names, and one
// added like both, stay a removal and an addition, since which one was
// renamed cannot be told.
func renames(drift []lock.Drift, locked, live *lock.Entry) map[lock.Kind]map[string]string {
	type side struct{ removed, added []string }
	byKind := map[lock.Kind]*side{}
	for _, d := range drift {
		if !d.IsItem() || d.Action == '~' {
			continue
		}
		s := byKind[d.Kind]
		if s == nil {
			s = &side{}
			byKind[d.Kind] = s
		}
		if d.Action == '-' {
			s.removed = append(s.removed, d.Key)
		} else {
			s.added = append(s.added, d.Key)
		}
	}
	var out map[lock.Kind]map[string]string
	for k, s := range byKind {
		if len(s.removed) == 0 || len(s.added) == 0 {
			continue
		}
		old := contracts(k, locked, s.removed)
		now := contracts(k, live, s.added)
		for i, a := range now {
			if a == nil {
				continue
			}
			match := -1
			for j, r := range old {
				if equalJSON(a, r) {
					if match >= 0 {
						match = -2 // two candidates: ambiguous
						break
					}
					match = j
				}
			}
			if match < 0 || matches(a, now) > 1 {
				continue
			}
			if out == nil {
				out = map[lock.Kind]map[string]string{}
			}
			if out[k] == nil {
				out[k] = map[string]string{}
			}
			out[k][s.added[i]] = s.removed[match]
		}
	}
	return out
}

// contracts is each keyed item of e decoded, without its key field: what
// a rename keeps.
func contracts(k lock.Kind, e *lock.Entry, keys []string) []any {
	out := make([]any, len(keys))
	for i, key := range keys {
		it, _ := e.Find(k, key)
		v, ok := decode(it.JSON).(map[string]any)
		if !ok {
			continue
		}
		delete(v, k.KeyField())
		out[i] = v
	}
	return out
}

// matches counts the values in list equal to v.
func matches(v any, list []any) int {
	n := 0
	for _, w := range list {
		if equalJSON(v, w) {
			n++
		}
	}
	return n
}
