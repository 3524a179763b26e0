package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/pins/npm"
	"github.com/mcpform/mcpform/plan"
	"github.com/mcpform/mcpform/policy"
)

// mcpform install fills mcpform's cache with the locked npm and PyPI trees,
// and run starts those servers from it (docs/LOCKFILE.md, "npm trees",
// "PyPI trees").

type installFlags struct {
	lock  string
	names []string
}

func parseInstallFlags(args []string, stderr io.Writer) (installFlags, error) {
	var f installFlags
	fs := newFlagSet("install", stderr, `Usage: mcpform install [-lock FILE] [NAME...]

Installs the tree each locked npm or PyPI server (or each NAME) pins into mcpform's
cache ($XDG_CACHE_HOME/mcpform, or ~/.cache/mcpform) and checks it: an npm tree from the
lockfile stored beside mcp.lock, with npm ci (its install scripts run only where the
lock allows them), a PyPI tree from the stored requirements file into a venv, with
pip --require-hashes. Needs npm or pip and their registry (or their cache); afterwards
mcpform run starts those servers without either. An installed tree is checked again,
not reinstalled.
`)
	fs.StringVar(&f.lock, "lock", lock.DefaultPath, "the lock whose npm and PyPI servers to install")
	if err := parseArgs(fs, args); err != nil {
		return f, err
	}
	f.names = fs.Args()
	return f, nil
}

func runInstall(ctx context.Context, io *stdio, f installFlags) int {
	lf, err := lock.Load(f.lock)
	if err != nil {
		return fail(io, err)
	}
	names := f.names
	if len(names) == 0 {
		for n, e := range lf.Servers {
			if e.Mcpform != nil && (e.Mcpform.NPM != nil || e.Mcpform.PyPI != nil) {
				names = append(names, n)
			}
		}
		sort.Strings(names)
	}
	root, err := npmCacheRoot(io.getenv)
	if err != nil {
		return fail(io, err)
	}
	lockDir := filepath.Dir(f.lock)
	code := exitOK
	for _, n := range names {
		e, ok := lockedServer(io, "mcpform install", lf, n, f.lock)
		if !ok {
			return exitError
		}
		if isPyPI, err := installPyPIServer(ctx, io, n, e, lockDir); isPyPI {
			if err != nil {
				fmt.Fprintf(io.err, "mcpform install: server %q: %v\n", n, err)
				code = exitError
			}
			continue
		}
		if e.Mcpform == nil || e.Mcpform.NPM == nil {
			fmt.Fprintf(io.err, "mcpform install: server %q pins no npm or PyPI tree; nothing to install\n", n)
			continue
		}
		rec := e.Mcpform.NPM
		if _, err := installNPM(ctx, rec, lockDir, root); err != nil {
			fmt.Fprintf(io.err, "mcpform install: server %q: %v\n", n, err)
			code = exitError
			continue
		}
		fmt.Fprintf(io.out, "%s: %s@%s installed (%s)\n", n, escape.String(rec.Package), escape.String(rec.Version), npm.EntryDir(root, plan.NPMPin(rec)))
	}
	return code
}

// npmCacheRoot is the cache of installed npm trees: $XDG_CACHE_HOME/mcpform/npm,
// or ~/.cache/mcpform/npm.
func npmCacheRoot(getenv func(string) string) (string, error) {
	return cacheDir(getenv, "npm", "npm trees")
}

// cacheDir is mcpform's cache directory of one kind of pinned code:
// $XDG_CACHE_HOME/mcpform/SUB when XDG_CACHE_HOME is absolute, else
// ~/.cache/mcpform/SUB; what names the kind in the error.
func cacheDir(getenv func(string) string, sub, what string) (string, error) {
	if d := getenv("XDG_CACHE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "mcpform", sub), nil
	}
	home := getenv("HOME")
	if home == "" {
		home = getenv("USERPROFILE")
	}
	if home == "" {
		return "", fmt.Errorf("no cache directory for %s: set XDG_CACHE_HOME or HOME", what)
	}
	return filepath.Join(home, ".cache", "mcpform", sub), nil
}

// installNPM installs rec's tree into root, once, from the lockfile stored
// beside the lock, after checking that file against the lock's digest; an
// entry already there is verified instead. It returns the bin's file.
func installNPM(ctx context.Context, rec *lock.NPM, lockDir, root string) (string, error) {
	if _, err := plan.StoredLockfile(lockDir, rec); err != nil {
		return "", fmt.Errorf("%w: nothing was installed; run mcpform plan to review the pin", err)
	}
	dir := filepath.Join(lockDir, filepath.FromSlash(path.Dir(rec.Lockfile.Path)))
	return npm.Install(ctx, plan.NPMPin(rec), dir, root)
}

// npmStart is the entry run starts for an npm server: node with the bin of
// the locked tree in mcpform's cache and the argv's arguments after the
// package, in place of the runner. The tree is verified against its
// manifest first; a tree not installed yet is installed from the stored
// lockfile (which needs npm and the registry or npm's cache). A sandboxed
// server gets the cache entry as a read grant. Any failure means the server
// must not start.
func npmStart(ctx context.Context, getenv func(string) string, e *lock.Entry, lockDir string) (*lock.Entry, error) {
	rec := e.Mcpform.NPM
	spec, ok, err := npm.Parse(e.Command)
	if !ok || err != nil || spec.Package != rec.Package || spec.Version != rec.Version {
		return nil, fmt.Errorf("the locked command is not the npm package its npm record pins (%v): run mcpform plan", err)
	}
	if err := npm.CheckEnv(e.EnvPassthrough); err != nil {
		return nil, fmt.Errorf("%w, then run mcpform plan and apply", err)
	}
	if err := npm.CheckGlobals(e.EnvPassthrough, getenv); err != nil {
		return nil, err
	}
	root, err := npmCacheRoot(getenv)
	if err != nil {
		return nil, err
	}
	pin := plan.NPMPin(rec)
	bin, err := npm.BinFile(root, pin)
	if err != nil {
		return nil, err
	}
	if _, serr := os.Lstat(npm.EntryDir(root, pin)); errors.Is(serr, fs.ErrNotExist) {
		if _, err := plan.StoredLockfile(lockDir, rec); err != nil {
			return nil, fmt.Errorf("%s@%s is not installed in %s, and %w: nothing was installed or started; run mcpform plan to review the pin",
				escape.String(rec.Package), escape.String(rec.Version), root, err)
		}
		if _, err := installNPM(ctx, rec, lockDir, root); err != nil {
			return nil, fmt.Errorf("%s@%s is not installed in %s, and installing it failed, so it does not start: %w\nRun mcpform install on a machine that reaches the npm registry (it fills the cache for offline starts)",
				escape.String(rec.Package), escape.String(rec.Version), root, err)
		}
	} else if err := npm.Verify(root, pin); err != nil {
		return nil, err
	}
	out := *e
	out.Command = append([]string{"node", bin}, spec.Args...)
	if e.Policy != nil && e.Policy.Sandbox != nil {
		pol := *e.Policy
		sb := *pol.Sandbox
		sb.Filesystem = policy.Filesystem{Read: append(append([]string{}, sb.Filesystem.Read...), npm.EntryDir(root, pin)), Write: sb.Filesystem.Write}
		pol.Sandbox = &sb
		out.Policy = &pol
	}
	return &out, nil
}
