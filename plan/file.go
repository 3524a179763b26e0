package plan

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/mcpform/mcpform/internal/lockedfile"
	"github.com/mcpform/mcpform/internal/strictjson"
	"github.com/mcpform/mcpform/lock"
)

// Finish computes the lock that applying p to current would write (current
// is nil when there is no lock yet) and stores it, with the notes about
// dropped taint labels, in p. A plan with errors gets no planned lock: apply
// refuses it.
func Finish(p *Plan, current *lock.File, generator string) error {
	if len(p.Errors()) > 0 {
		return nil
	}
	next := &lock.File{Generator: generator, Servers: map[string]*lock.Entry{}}
	if current != nil {
		for name, e := range current.Servers {
			next.Servers[name] = e
		}
	}
	for _, sp := range p.Servers {
		switch {
		case sp.Action == Delete:
			delete(next.Servers, sp.Name)
		case sp.Entry != nil:
			p.Notes = append(p.Notes, dropGoneLabels(sp.Name, sp.Entry)...)
			p.Notes = append(p.Notes, insecureWarnNote(sp)...)
			next.Servers[sp.Name] = sp.Entry
		}
	}
	// An entry the lock holds without a configDigest gets one (Marshal
	// writes it for every entry): for a server the plan does not change
	// otherwise, a rewrite of the lock, not a change of the server.
	changed := map[string]bool{}
	for _, sp := range p.Servers {
		changed[sp.Name] = sp.Action != NoOp
	}
	if current != nil {
		for _, name := range slices.Sorted(maps.Keys(current.Servers)) {
			if _, kept := next.Servers[name]; kept && !changed[name] && current.Servers[name].ConfigDigest == "" {
				p.AddsConfigDigest = append(p.AddsConfigDigest, name)
				p.Notes = append(p.Notes, fmt.Sprintf("server %q: the lock's entry has no configDigest; apply adds one (nothing of the server changes)", name))
			}
		}
	}
	data, err := lock.Marshal(next)
	if err != nil {
		return fmt.Errorf("building the planned lock: %w", err)
	}
	if _, err := lock.Parse(data); err != nil {
		return fmt.Errorf("the planned lock does not verify: %w", err)
	}
	p.PlannedLock = data
	return nil
}

// dropGoneLabels removes taint labels that name tools the entry no longer
// has, and says which: a lock's taint names must be locked tools, and a
// renamed tool is not protected until it is labelled again, so the user
// must hear of it (docs/LOCKFILE.md, "Policy").
func dropGoneLabels(name string, e *lock.Entry) []string {
	if e.Policy == nil || e.Policy.Taint == nil {
		return nil
	}
	var notes []string
	keep := func(list []string, what string, wildcards bool) []string {
		out := []string{}
		for _, l := range list {
			if _, ok := e.Find(lock.Tools, l); ok || wildcards && (l == "resources:*" || l == "prompts:*") {
				out = append(out, l)
				continue
			}
			notes = append(notes, fmt.Sprintf("server %q: taint %s %q dropped: the server no longer has that tool; a renamed tool is not protected until you label it again", name, what, l))
		}
		return out
	}
	t := *e.Policy.Taint
	t.Sources = keep(t.Sources, "source", true)
	t.Sinks = keep(t.Sinks, "sink", false)
	pol := *e.Policy
	pol.Taint = &t
	e.Policy = &pol
	return notes
}

// Save writes p to path, for `apply FILE`, atomically (mode 0600): a
// crash or a reader never sees half a plan. The file holds the planned
// lock, so applying it needs no second probe.
func Save(path string, p *Plan) error {
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the plan: %w", err)
	}
	if err := lockedfile.WriteFile(path, append(data, '\n'), 0o600, nil); err != nil {
		return fmt.Errorf("saving the plan: %w", err)
	}
	return nil
}

// ReadFile reads a plan saved by Save. It checks the format version and
// that the planned lock verifies; whether the plan is stale is apply's to
// decide.
func ReadFile(path string) (*Plan, error) {
	data, err := lockedfile.ReadRegular(path, lock.MaxFileSize*2)
	if err != nil {
		return nil, fmt.Errorf("reading the saved plan: %w", err)
	}
	if err := strictjson.Check(data); err != nil {
		return nil, fmt.Errorf("%s is not a saved plan: %w", path, err)
	}
	p := &Plan{}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(p); err != nil {
		return nil, fmt.Errorf("%s is not a saved plan: %w", path, err)
	}
	if p.FormatVersion != FormatVersion {
		return nil, fmt.Errorf("%s was saved in plan format %q; this mcpform reads %q: run mcpform plan -out again", path, p.FormatVersion, FormatVersion)
	}
	if len(p.PlannedLock) == 0 {
		return nil, fmt.Errorf("%s holds no planned lock (the plan had errors): fix them and run mcpform plan -out again", path)
	}
	planned, err := lock.Parse(p.PlannedLock)
	if err != nil {
		return nil, fmt.Errorf("the lock planned in %s does not verify: %w", path, err)
	}
	// The plan file re-indents the embedded lock; restore the bytes apply
	// will write.
	if p.PlannedLock, err = lock.Marshal(planned); err != nil {
		return nil, fmt.Errorf("the lock planned in %s: %w", path, err)
	}
	return p, nil
}

// LockDigest identifies the lock bytes a plan was made against; "" when
// there was no lock.
func LockDigest(data []byte) string {
	if data == nil {
		return ""
	}
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}
