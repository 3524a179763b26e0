package policy

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// What run does when the live surface drifts from the lock (on_drift in
// mcp.hcl, "onDrift" in the lock's policy).
const (
	// DriftQuarantine refuses every request to the server (the default).
	DriftQuarantine = "quarantine"
	// DriftBlockChanged hides and refuses only the tools, prompts,
	// resources and templates that changed, were added or were removed;
	// drift that is not about one item (instructions, the era) still
	// quarantines the whole server.
	DriftBlockChanged = "block-changed"
	// DriftInsecureWarn serves the locked surface and only records the
	// drift: it weakens what the lock guarantees, hence its name.
	DriftInsecureWarn = "insecure-warn"
)

// DriftModes are the values on_drift takes, strongest first.
var DriftModes = []string{DriftQuarantine, DriftBlockChanged, DriftInsecureWarn}

// CheckOnDrift reports whether s is an on_drift value ("" is the default,
// quarantine). "warn" alone is refused with the reason for the longer name.
func CheckOnDrift(s string) error {
	switch s {
	case "", DriftQuarantine, DriftBlockChanged, DriftInsecureWarn:
		return nil
	case "warn":
		return fmt.Errorf(`on_drift "warn" is written %q: it serves a server whose surface no longer matches the lock, which weakens what the lock guarantees, and the name says so`, DriftInsecureWarn)
	}
	return fmt.Errorf("on_drift is %q, %q or %q, not %q", DriftQuarantine, DriftBlockChanged, DriftInsecureWarn, s)
}

// DriftStrength orders the modes: 0 for quarantine (and ""), 1 for
// block-changed, 2 for insecure-warn. A higher number guarantees less.
func DriftStrength(s string) int {
	switch s {
	case DriftBlockChanged:
		return 1
	case DriftInsecureWarn:
		return 2
	}
	return 0
}

// OnDriftMode is p's on_drift, DriftQuarantine when p or its value is unset.
func (p *Policy) OnDriftMode() string {
	if p == nil || p.OnDrift == "" {
		return DriftQuarantine
	}
	return p.OnDrift
}

// Expose is the subset of a server's locked items a client may see and
// call. Each list holds glob patterns (see Match); a nil list exposes every
// item of its kind, an empty one none. Resources covers both resources (by
// URI) and resource templates (by their uriTemplate text). Items left out
// stay locked, so their drift is still caught, but are hidden from the
// client as if they were not locked.
type Expose struct {
	Tools     []string
	Prompts   []string
	Resources []string
}

// MarshalJSON writes only the lists that are set, so that an unset list
// (expose all) and an empty one (expose none) stay apart.
func (x Expose) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	first := true
	for _, f := range []struct {
		key  string
		list []string
	}{{"prompts", x.Prompts}, {"resources", x.Resources}, {"tools", x.Tools}} {
		if f.list == nil {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		l, err := json.Marshal(f.list)
		if err != nil {
			return nil, err
		}
		b.WriteString(`"` + f.key + `":`)
		b.Write(l)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

// UnmarshalJSON reads the lists; a list written as null is refused (an
// unset list is left out).
func (x *Expose) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil || raw == nil {
		return fmt.Errorf("expose must be an object of pattern lists")
	}
	out := Expose{}
	for key, v := range raw {
		var dst *[]string
		switch key {
		case "tools":
			dst = &out.Tools
		case "prompts":
			dst = &out.Prompts
		case "resources":
			dst = &out.Resources
		default:
			return fmt.Errorf("expose: unknown key %q (the lists are tools, prompts and resources)", key)
		}
		var l []string
		if err := json.Unmarshal(v, &l); err != nil || l == nil {
			return fmt.Errorf("expose.%s must be a list of patterns", key)
		}
		*dst = l
	}
	*x = out
	return nil
}

// Check reports the first malformed pattern of x: an empty one, one with
// invalid UTF-8 or a control character, or one listed twice in its list.
func (x *Expose) Check() error {
	if x == nil {
		return nil
	}
	for _, f := range []struct {
		key  string
		list []string
	}{{"tools", x.Tools}, {"prompts", x.Prompts}, {"resources", x.Resources}} {
		seen := map[string]bool{}
		for _, p := range f.list {
			if err := CheckPattern(p); err != nil {
				return fmt.Errorf("expose.%s: %w", f.key, err)
			}
			if seen[p] {
				return fmt.Errorf("expose.%s: %q is listed twice", f.key, p)
			}
			seen[p] = true
		}
	}
	return nil
}

// CheckPattern reports whether p is an expose pattern: non-empty, valid
// UTF-8, no control characters.
func CheckPattern(p string) error {
	if p == "" {
		return fmt.Errorf("a pattern cannot be empty")
	}
	if !utf8.ValidString(p) {
		return fmt.Errorf("pattern %q is not valid UTF-8", p)
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("pattern %q holds a control character", p)
		}
	}
	return nil
}

// Exposes reports whether the item named name of a kind whose patterns are
// list may be seen: every item when list is nil, else those some pattern
// matches.
func Exposes(list []string, name string) bool {
	if list == nil {
		return true
	}
	for _, p := range list {
		if Match(p, name) {
			return true
		}
	}
	return false
}

// Match reports whether the glob pattern matches the whole of name. "*"
// matches any run of characters (including none, and "/": names are not
// paths), "?" exactly one character; every other character, "[" and "\"
// included, matches itself. Characters are runes.
func Match(pattern, name string) bool {
	// The classic linear wildcard match: on a mismatch after a "*", retry
	// with the star taking one more character.
	p, n := 0, 0
	star, mark := -1, 0
	for n < len(name) {
		if p < len(pattern) {
			pc, pw := utf8.DecodeRuneInString(pattern[p:])
			_, nw := utf8.DecodeRuneInString(name[n:])
			switch {
			case pc == '*':
				star, mark = p, n
				p += pw
				continue
			case pc == '?':
				p += pw
				n += nw
				continue
			case strings.HasPrefix(name[n:], pattern[p:p+pw]):
				p += pw
				n += pw
				continue
			}
		}
		if star < 0 {
			return false
		}
		_, nw := utf8.DecodeRuneInString(name[mark:])
		mark += nw
		p, n = star+1, mark
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}
