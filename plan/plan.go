package plan

import (
	"encoding/json"
	"fmt"

	"github.com/mcpform/mcpform/lock"
)

// FormatVersion is the version of a saved plan file and of the -json
// output. It changes when a field changes meaning or is removed.
const FormatVersion = "1.0"

// Action is what a change does, written as its glyph (terraform's
// internal/plans/action.go does the same).
type Action rune

const (
	NoOp   Action = 0
	Create Action = '+'
	Update Action = '~'
	Delete Action = '-'
)

// MarshalText writes the action's name ("create", "update", "delete",
// "no-op").
func (a Action) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText reads an action's name.
func (a *Action) UnmarshalText(b []byte) error {
	for _, c := range []Action{NoOp, Create, Update, Delete} {
		if c.String() == string(b) {
			*a = c
			return nil
		}
	}
	return fmt.Errorf("unknown action %q", b)
}

func (a Action) String() string {
	switch a {
	case Create:
		return "create"
	case Update:
		return "update"
	case Delete:
		return "delete"
	}
	return "no-op"
}

// Class is a change's drift class. Changes to mcp.hcl are their own class,
// and so are changes of the code behind a surface (Code: a pinned
// executable or script), which no surface digest covers.
type Class string

const (
	Definitional  Class = "definitional"
	Informational Class = "informational"
	Config        Class = "config"
	Code          Class = "code"
)

// Grade is a change's semantic-versioning grade.
type Grade int

const (
	None Grade = iota
	Patch
	Minor
	Major
)

func (g Grade) String() string {
	return [...]string{"none", "patch", "minor", "major"}[g]
}

// MarshalText writes the grade's name, so JSON shows "major", not 3.
func (g Grade) MarshalText() ([]byte, error) { return []byte(g.String()), nil }

// UnmarshalText reads a grade's name.
func (g *Grade) UnmarshalText(b []byte) error {
	for i, n := range [...]string{"none", "patch", "minor", "major"} {
		if string(b) == n {
			*g = Grade(i)
			return nil
		}
	}
	return &json.UnsupportedValueError{Str: string(b)}
}

// Change is one reviewed difference, plain data: computed by pure functions
// in this package, printed by plan/render, written by apply.
type Change struct {
	// Addr locates the change: "server.time",
	// "server.time.tool.get_current_time",
	// "server.time.tool.get_current_time.inputSchema.properties.x".
	Addr   string `json:"address"`
	Action Action `json:"action"`
	Class  Class  `json:"class"`
	Grade  Grade  `json:"grade"`
	// Rule is the stable id `mcpform explain RULE` describes.
	Rule string `json:"rule"`
	// Security marks a change a reviewer must read with an attacker in
	// mind: a changed description or instructions, an annotation that
	// raises risk.
	Security bool `json:"security_relevant"`
	// Before and After are the JSON values on each side; nil where the side
	// has none (a created or deleted item).
	Before json.RawMessage `json:"before,omitempty"`
	After  json.RawMessage `json:"after,omitempty"`
	// Detail says in words what changed, when Before/After alone do not.
	Detail string `json:"detail,omitempty"`
	// Item is the address of the tool, prompt, resource or template the
	// change is in or of ("server.time.tool.get_current_time"), so that a
	// renderer can group changes without parsing addresses (a URI holds
	// dots); empty for a server-level change.
	Item string `json:"item,omitempty"`
	// Judgement is what the judges of mcp.hcl said of a changed
	// description or instructions text (judged.go); nil when none was
	// asked. Never part of the lock.
	Judgement *Judgement `json:"judgement,omitempty"`
}

// ServerPlan is everything the plan says about one server.
type ServerPlan struct {
	Name string `json:"name"` // the lock's name: "time", "github.issues"
	Addr string `json:"address"`
	// Action is Create for a server new to the lock, Delete for one removed
	// from mcp.hcl, Update when anything changed, NoOp otherwise.
	Action  Action   `json:"action"`
	Changes []Change `json:"changes"`
	// Unchanged counts the items of each kind (by list field) that did not
	// change, for "(N unchanged tools hidden)".
	Unchanged map[string]int `json:"unchanged,omitempty"`
	// Error is why the server could not be probed; such a server's entry is
	// not replaced by apply.
	Error string `json:"error,omitempty"`
	// New is set for a server the lock does not hold yet.
	New bool `json:"new,omitempty"`
	// RequiredBump is the highest grade of the server's surface changes.
	RequiredBump Grade `json:"required_bump"`
	// Version and LockedVersion are the declared surface versions in
	// mcp.hcl and in the lock; VersionError says why the declared version
	// does not cover RequiredBump.
	Version       string `json:"version,omitempty"`
	LockedVersion string `json:"locked_version,omitempty"`
	VersionError  string `json:"version_error,omitempty"`
	// SuggestedVersion is the semver advice: LockedVersion bumped by
	// RequiredBump, the least version the gate accepts ("" without a
	// locked version). Make sets it once the grades are final.
	SuggestedVersion string `json:"suggested_version,omitempty"`
	// Entry is what apply writes for this server (nil for Delete, or when
	// probing failed).
	Entry *lock.Entry `json:"-"`
	// Files are what apply writes beside the lock for this server before
	// the lock: an npm server's freshly resolved package.json and
	// package-lock.json (none when the locked tree was kept). The saved
	// plan carries them, so apply needs no second resolve.
	Files []PlannedFile `json:"files,omitempty"`
}

// Plan is the whole plan: the servers in name order, and what it was made
// against, so that apply can refuse a stale one.
type Plan struct {
	FormatVersion string        `json:"format_version"`
	ConfigDigest  string        `json:"config_digest"`
	LockDigest    string        `json:"lock_digest"` // "" when there was no lock
	LockPath      string        `json:"lock_path"`
	Servers       []*ServerPlan `json:"servers"`
	RequiredBump  Grade         `json:"required_bump"`
	// PlannedLock is the lock apply writes, as bytes lock.Parse verifies;
	// set when the plan has no errors (Finish sets it).
	PlannedLock json.RawMessage `json:"planned_lock,omitempty"`
	// Notes are things apply will do that are not changes to the surface,
	// such as taint labels dropped for tools that no longer exist.
	Notes []string `json:"notes,omitempty"`
	// AddsConfigDigest names the servers, in name order, that the plan
	// does not change and whose lock entry has no configDigest (a lock of
	// another writer, or an older mcpform): apply writes one, which is no
	// change of the server to review (Notes says so). Finish sets it.
	AddsConfigDigest []string `json:"adds_config_digest,omitempty"`
}

// HasChanges reports whether applying the plan would change the lock or
// the files beside it.
func (p *Plan) HasChanges() bool {
	if len(p.AddsConfigDigest) > 0 {
		// The lock gains its configDigests: apply writes it.
		return true
	}
	for _, s := range p.Servers {
		// Files alone is a stored npm lockfile written back (Notes says
		// so): the lock keeps its bytes, the directory beside it does not.
		if s.Action != NoOp || len(s.Files) > 0 {
			return true
		}
	}
	return false
}

// Errors lists the servers that could not be probed and the version gates
// that failed: a plan with errors exits 1 and apply refuses it.
func (p *Plan) Errors() []string {
	var out []string
	for _, s := range p.Servers {
		if s.Error != "" {
			out = append(out, s.Addr+": "+s.Error)
		}
		if s.VersionError != "" {
			out = append(out, s.Addr+": "+s.VersionError)
		}
	}
	return out
}
