package main

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"slices"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/pins/pypi"
	"github.com/mcpform/mcpform/plan"
)

// A PyPI runner's server (uvx, uv tool run, pipx run) starts from its
// locked tree in mcpform's cache, never the runner; mcpform install fills
// the cache ahead of time (docs/LOCKFILE.md, "PyPI trees").

// pypiCacheRoot is the cache of installed PyPI trees:
// $XDG_CACHE_HOME/mcpform/pypi, or ~/.cache/mcpform/pypi.
func pypiCacheRoot(getenv func(string) string) (string, error) {
	return cacheDir(getenv, "pypi", "PyPI trees")
}

// installPyPI installs rec's tree into root, once, from the requirements
// file stored beside the lock, after checking that file against the lock;
// an entry already there is verified instead.
func installPyPI(ctx context.Context, rec *lock.PyPI, lockDir, root string) (*pypi.Pin, error) {
	if _, err := plan.StoredRequirements(lockDir, rec); err != nil {
		return nil, fmt.Errorf("%w: nothing was installed; run mcpform plan to review the pin", err)
	}
	dir := filepath.Join(lockDir, filepath.FromSlash(path.Dir(rec.Requirements.Path)))
	return pypi.Install(ctx, plan.PyPIPin(rec), dir, root, pypi.Options{})
}

// installPyPIServer is mcpform install's part for a locked PyPI server:
// ok is false when the entry pins no PyPI tree.
func installPyPIServer(ctx context.Context, io *stdio, name string, e *lock.Entry, lockDir string) (ok bool, err error) {
	if e.Mcpform == nil || e.Mcpform.PyPI == nil {
		return false, nil
	}
	root, err := pypiCacheRoot(io.getenv)
	if err != nil {
		return true, err
	}
	rec := e.Mcpform.PyPI
	pin, err := installPyPI(ctx, rec, lockDir, root)
	if err != nil {
		return true, err
	}
	fmt.Fprintf(io.out, "%s: %s==%s installed (%s)\n", name, escape.String(rec.Package), escape.String(rec.Version), pypi.EntryDir(root, pin))
	return true, nil
}

// pypiStart is the entry run starts for a PyPI server: the venv's python
// running the locked console script's entry point from the locked tree in
// mcpform's cache, with the argv's arguments after the package, in place
// of the runner. The tree is verified against its manifest first; a tree
// not installed yet is installed from the stored requirements file (which
// needs python3, pip and the index, or wheels pip can find). A sandboxed
// server gets the cache entry as a read grant (the sandbox itself grants a
// venv's program its venv and interpreter to execute). Any failure means
// the server must not start.
func pypiStart(ctx context.Context, getenv func(string) string, e *lock.Entry, lockDir string) (*lock.Entry, error) {
	rec := e.Mcpform.PyPI
	spec, ok, err := pypi.Parse(e.Command)
	if !ok || err != nil || spec.Package != rec.Package || spec.Version != rec.Version || (spec.Command != "" && spec.Command != rec.Script) {
		return nil, fmt.Errorf("the locked command is not the PyPI package its pypi record pins (%v): run mcpform plan", err)
	}
	root, err := pypiCacheRoot(getenv)
	if err != nil {
		return nil, err
	}
	pin := plan.PyPIPin(rec)
	if !pypi.Installed(root, pin) {
		// Absent, or an install that did not finish or is under way in
		// another process: Install takes the entry's lock and finishes it.
		if _, err := plan.StoredRequirements(lockDir, rec); err != nil {
			return nil, fmt.Errorf("%s==%s is not installed in %s, and %w: nothing was installed or started; run mcpform plan to review the pin",
				escape.String(rec.Package), escape.String(rec.Version), root, err)
		}
		if _, err := installPyPI(ctx, rec, lockDir, root); err != nil {
			return nil, fmt.Errorf("%s==%s is not installed in %s, and installing it failed, so it does not start: %w\nRun mcpform install on a machine that reaches the index (it fills the cache for offline starts)",
				escape.String(rec.Package), escape.String(rec.Version), root, err)
		}
	} else if err := pypi.Verify(root, pin); err != nil {
		return nil, err
	}
	argv, err := pypi.Argv(root, pin)
	if err != nil {
		return nil, err
	}
	out := *e
	out.Command = append(argv, spec.Args...)
	if e.Policy != nil && e.Policy.Sandbox != nil {
		pol := *e.Policy
		sb := *pol.Sandbox
		sb.Filesystem.Read = append(slices.Clip(sb.Filesystem.Read), pypi.ReadPaths(root, pin)...)
		pol.Sandbox = &sb
		out.Policy = &pol
	}
	return &out, nil
}
