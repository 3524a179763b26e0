package lock

import (
	"bytes"
	"slices"
)

// Class is a drift class, as the mcp.lock format defines them (see
// docs/LOCKFILE.md, "A server's entry").
type Class int

const (
	// Definitional drift changes what a client can do or what the model
	// reads: an item added, removed or changed, the instructions, the era.
	// verify exits 1 and the proxy quarantines.
	Definitional Class = iota + 1
	// Informational drift changes only serverInfo, capabilities,
	// protocolVersion or supportedVersions. It is reported; the client
	// still sees the locked values.
	Informational
)

func (c Class) String() string {
	switch c {
	case Definitional:
		return "definitional"
	case Informational:
		return "informational"
	}
	return "unknown"
}

// Drift is one difference between a locked entry and a live surface, at the
// level digests can tell: which field or item, not what inside it.
type Drift struct {
	Class Class
	// Field is the entry field that changed: "instructions", "era",
	// "serverInfo", "capabilities", "protocolVersion", "supportedVersions",
	// or a list field ("tools", …) for an item.
	Field string
	// Kind and Key name the item, when Field is a list.
	Kind Kind
	Key  string
	// Action is '+' (the live surface has it, the lock does not), '-' (the
	// lock has it, the live surface does not) or '~' (both, different).
	Action rune
}

// IsItem reports whether the drift is about one item of a list.
func (d Drift) IsItem() bool { return d.Key != "" }

// Compare lists how live differs from locked. Both entries must be sealed.
// Definitional drift comes first, then informational; items in key order.
func Compare(locked, live *Entry) []Drift {
	var out []Drift
	if locked.Modern() != live.Modern() {
		out = append(out, Drift{Class: Definitional, Field: "era", Action: '~'})
	}
	if !equalStringPtr(locked.Instructions, live.Instructions) {
		out = append(out, Drift{Class: Definitional, Field: "instructions", Action: action(locked.Instructions != nil, live.Instructions != nil)})
	}
	for _, k := range Kinds {
		out = appendItemDrift(out, k, locked.List(k), live.List(k))
	}
	if !jsonEqual(locked.ServerInfo, live.ServerInfo) {
		out = append(out, Drift{Class: Informational, Field: "serverInfo", Action: '~'})
	}
	if !jsonEqual(locked.Capabilities, live.Capabilities) {
		out = append(out, Drift{Class: Informational, Field: "capabilities", Action: '~'})
	}
	if locked.ProtocolVersion != live.ProtocolVersion {
		out = append(out, Drift{Class: Informational, Field: "protocolVersion", Action: '~'})
	}
	if locked.Modern() && live.Modern() && !slices.Equal(locked.SupportedVersions, live.SupportedVersions) {
		out = append(out, Drift{Class: Informational, Field: "supportedVersions", Action: '~'})
	}
	return out
}

// appendItemDrift merges two key-sorted lists.
func appendItemDrift(out []Drift, k Kind, locked, live []Item) []Drift {
	i, j := 0, 0
	for i < len(locked) || j < len(live) {
		switch {
		case j >= len(live) || i < len(locked) && locked[i].Key < live[j].Key:
			out = append(out, Drift{Class: Definitional, Field: k.Field(), Kind: k, Key: locked[i].Key, Action: '-'})
			i++
		case i >= len(locked) || live[j].Key < locked[i].Key:
			out = append(out, Drift{Class: Definitional, Field: k.Field(), Kind: k, Key: live[j].Key, Action: '+'})
			j++
		default:
			if locked[i].Digest != live[j].Digest {
				out = append(out, Drift{Class: Definitional, Field: k.Field(), Kind: k, Key: locked[i].Key, Action: '~'})
			}
			i++
			j++
		}
	}
	return out
}

func action(before, after bool) rune {
	switch {
	case !before:
		return '+'
	case !after:
		return '-'
	}
	return '~'
}

func equalStringPtr(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// jsonEqual compares two JSON values by their canonical digests, so key
// order and number spelling do not count as drift.
func jsonEqual(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	da, errA := Digest(a)
	db, errB := Digest(b)
	return errA == nil && errB == nil && da == db
}
