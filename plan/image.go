package plan

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/pins/image"
)

// imageResult is what plan pinned of a container server's image before
// its probe.
type imageResult struct {
	rec *lock.Image
	// argv is the command the probe starts (and run will): the image
	// written as REPOSITORY@DIGEST.
	argv []string
	// note is said in the plan's notes when set (a tag beside a digest).
	note string
	err  error
}

// resolveImage is image.Resolve; the tests replace nothing but the
// registry it reaches.
var resolveImage = image.Resolve

// planImage pins the image of a container server's command (docker or
// podman run): ok is false for any other command. The digest is resolved
// before the probe, and the probe starts the image by it, so the surface
// locked is the pinned image's. A reference is resolved on every plan: a
// tag moved to another image is PKG-IMAGE-CHANGED.
func planImage(ctx context.Context, name string, command []string, old *lock.Entry) (r imageResult, ok bool) {
	spec, ok, err := image.Parse(command)
	if !ok {
		return r, false
	}
	if err != nil {
		r.err = fmt.Errorf("mcpform pins a container server's image by its digest and cannot pin this command: %v; write it as docker run [FLAGS…] IMAGE ARGS…", err)
		return r, true
	}
	pin, err := resolveImage(ctx, spec, image.Options{})
	if err != nil {
		r.err = fmt.Errorf("%v; the lock is not changed", err)
		return r, true
	}
	r.rec = &lock.Image{Reference: pin.Reference, Digest: pin.Digest, MediaType: pin.MediaType}
	if o := oldImage(old); o != nil && o.Reference == r.rec.Reference && o.Digest == r.rec.Digest {
		// The same image: the lock keeps its record as it is.
		r.rec = o
	}
	r.argv = image.Argv(spec, pin)
	if pin.FromReference && spec.Repository() != strings.SplitN(spec.Image, "@", 2)[0] {
		r.note = fmt.Sprintf("server %q: the image %s names a tag and a digest: the digest is pinned and the tag ignored, as docker ignores it", name, escape.String(spec.Image))
	}
	return r, true
}

func oldImage(old *lock.Entry) *lock.Image {
	if old == nil || old.Mcpform == nil {
		return nil
	}
	return old.Mcpform.Image
}

// recordImage puts a probed container server's image pin into its planned
// entry, and its changes against the locked record into the plan.
func recordImage(p *Plan, sp *ServerPlan, ir imageResult, old *lock.Entry) {
	sp.Entry.Mcpform.Image = ir.rec
	if ir.note != "" {
		p.Notes = append(p.Notes, ir.note)
	}
	if old == nil && len(sp.Changes) > 0 && sp.Changes[0].Rule == "CFG-SERVER-ADDED" {
		// A new server's pin is written with it; the plan says what it is.
		sp.Changes[0].Detail += fmt.Sprintf(", and pins the image %s by its digest %s, which run starts", escape.String(ir.rec.Reference), ir.rec.Digest)
	}
	changes := imageChanges(sp.Addr, old == nil, oldImage(old), ir.rec)
	sp.Changes = append(sp.Changes, changes...)
	if old != nil && len(changes) > 0 {
		sp.Action = Update
	}
}

// imageChanges compares the locked image record with the planned one. The
// values are the records, so every format shows both sides.
func imageChanges(addr string, newServer bool, old, live *lock.Image) []Change {
	if live == nil || newServer {
		return nil
	}
	mk := func(c Change) []Change {
		r, _ := LookupRule(c.Rule)
		c.Class, c.Grade, c.Security = r.Class, r.Grade, r.Security
		return []Change{c}
	}
	a := addr + ".image"
	switch {
	case old == nil:
		return mk(Change{Addr: a, Action: Create, Rule: "PKG-IMAGE-ADDED", After: mustJSON(live),
			Detail: fmt.Sprintf("the image %s is pinned by its digest %s for the first time; run starts it by that digest, not the tag",
				escape.String(live.Reference), live.Digest)})
	case old.Reference != live.Reference:
		return mk(Change{Addr: a, Action: Update, Rule: "PKG-IMAGE-CHANGED", Before: mustJSON(old), After: mustJSON(live),
			Detail: fmt.Sprintf("mcp.hcl runs the image %s (%s), and the lock pins %s (%s)",
				escape.String(live.Reference), live.Digest, escape.String(old.Reference), old.Digest)})
	case old.Digest != live.Digest:
		return mk(Change{Addr: a + ".digest", Action: Update, Rule: "PKG-IMAGE-CHANGED", Before: mustJSON(old.Digest), After: mustJSON(live.Digest),
			Detail: fmt.Sprintf("%s now names another image: %s, locked %s (the tag was moved by whoever can push to the repository); run keeps starting the locked digest until this is applied",
				escape.String(live.Reference), live.Digest, old.Digest)})
	}
	return nil
}
