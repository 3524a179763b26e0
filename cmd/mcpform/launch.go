package main

import (
	"context"

	"github.com/mcpform/mcpform/lock"
)

// launchable is a locked entry as mcpform starts it: an npm server as node
// with the bin of its verified tree in mcpform's cache (npmStart), a PyPI
// server from its verified venv there (pypiStart), a container server by
// its locked image digest (imageStart), any other entry as it is. run and verify both start servers through it, so
// the code verify probes is the code run serves. An error means the
// pinned code must not start.
func launchable(ctx context.Context, getenv func(string) string, e *lock.Entry, lockDir string) (*lock.Entry, error) {
	if e.Remote == nil && e.Mcpform != nil && e.Mcpform.Image != nil {
		// A container server by its locked image digest (image.go).
		return imageStart(e)
	}
	if e.Remote == nil && e.Mcpform != nil && e.Mcpform.NPM != nil {
		return npmStart(ctx, getenv, e, lockDir)
	}
	if e.Remote == nil && e.Mcpform != nil && e.Mcpform.PyPI != nil {
		return pypiStart(ctx, getenv, e, lockDir)
	}
	return e, nil
}
