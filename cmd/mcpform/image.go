package main

import (
	"fmt"
	"strings"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/pins/image"
)

// imageStart is a locked container server's entry as run starts it: the
// locked command with its image written as REPOSITORY@DIGEST, the digest
// the lock pins, never the tag (docs/LOCKFILE.md, "Container images").
// The engine (command[0]) is unchanged, so its executable pin is checked
// as before. A locked command that no longer runs the locked reference is
// refused: nothing of it starts. An entry imageStart already rewrote is
// returned as it is.
func imageStart(e *lock.Entry) (*lock.Entry, error) {
	rec := e.Mcpform.Image
	spec, ok, err := image.Parse(e.Command)
	switch {
	case !ok:
		return nil, fmt.Errorf("the locked command is not a container run (docker run … IMAGE), and the lock pins the image %s (%s): nothing was started; run mcpform plan to review the change",
			escape.String(rec.Reference), rec.Digest)
	case err != nil:
		return nil, fmt.Errorf("the locked command cannot start the pinned image (%v): nothing was started; run mcpform plan", err)
	case spec.Image == spec.Repository()+"@"+rec.Digest && rec.Reference != spec.Image && repositoryOf(rec.Reference) == spec.Repository():
		// Already started by the digest (imageStart's own output): the
		// pinned image, as it is.
		return e, nil
	case spec.Image != rec.Reference:
		return nil, fmt.Errorf("the locked command runs the image %s, and the lock pins %s (%s): nothing was started; run mcpform plan to review the change",
			escape.String(spec.Image), escape.String(rec.Reference), rec.Digest)
	}
	if _, d, ok := strings.Cut(spec.Image, "@"); ok && d != rec.Digest {
		return nil, fmt.Errorf("the locked image %s names the digest %s, and the lock pins %s: nothing was started; run mcpform plan",
			escape.String(spec.Image), escape.String(d), rec.Digest)
	}
	out := *e
	out.Command = image.Argv(spec, &image.Pin{Reference: rec.Reference, Digest: rec.Digest})
	return &out, nil
}

// repositoryOf is an image reference's repository as written, or "" when
// it is not a reference.
func repositoryOf(ref string) string {
	spec, ok, err := image.Parse([]string{"docker", "run", ref})
	if !ok || err != nil {
		return ""
	}
	return spec.Repository()
}
