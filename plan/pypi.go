package plan

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/lang"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/pins/pypi"
)

// PyPIDir is where apply stores each PyPI server's pinned tree, relative
// to the lock's directory: PyPIDir/<server>/requirements.txt
// (docs/LOCKFILE.md, "PyPI trees").
const PyPIDir = ".mcpform/pypi"

// pypiResult is what plan pinned of a PyPI runner's server before its
// probe: the record, the file apply stores, and the argv the probe starts
// from the cache.
type pypiResult struct {
	rec *lock.PyPI
	// files is the requirements.txt when the tree was resolved afresh;
	// nil when the locked record was kept.
	files []PlannedFile
	// oldTree and newTree are the stored and the fresh requirements, for
	// the per-package diff of a changed tree (nil when unknown).
	oldTree, newTree []byte
	// argv is what the probe starts: the installed tree's interpreter and
	// launcher, and the argv's arguments after the package.
	argv []string
	// reads are what a sandboxed probe must read (pypi.ReadPaths: the
	// cache entry).
	reads []string
	// packages counts the tree's packages.
	packages int
	err      error
}

// planPyPIServer is the plan of a command server that runs a PyPI
// package runner (pypi.Parse): ok is false for any other command. The
// result's err is the server's plan error.
func planPyPIServer(ctx context.Context, s *lang.Server, old *lock.Entry, lockDir, cacheRoot string) (pypiResult, bool) {
	spec, ok, err := pypi.Parse(s.Command)
	if !ok {
		return pypiResult{}, false
	}
	if err != nil {
		return pypiResult{err: errors.New(checkExactPyPI(s, err))}, true
	}
	if cacheRoot == "" {
		return pypiResult{err: errors.New("mcpform has no cache directory for PyPI trees (set XDG_CACHE_HOME or HOME), so it cannot install the tree to probe it")}, true
	}
	return planPyPI(ctx, spec, s.Name, old, lockDir, cacheRoot), true
}

// recordPyPI puts a probed PyPI server's record and file into its plan,
// with its changes.
func recordPyPI(p *Plan, sp *ServerPlan, pr pypiResult, old *lock.Entry) {
	sp.Entry.Mcpform.PyPI = pr.rec
	sp.Files = append(sp.Files, pr.files...)
	if old == nil && len(sp.Changes) > 0 && sp.Changes[0].Rule == "CFG-SERVER-ADDED" {
		sp.Changes[0].Detail += fmt.Sprintf(", and pins %s==%s with its whole tree (%d packages, requirements sha256 %s…), which run starts from mcpform's cache",
			escape.String(pr.rec.Package), escape.String(pr.rec.Version), pr.packages, pr.rec.Requirements.SHA256[:12])
	}
	if old != nil && pr.files != nil && pr.rec == oldPyPI(old) {
		p.Notes = append(p.Notes, fmt.Sprintf("server %q: the stored requirements file %s was missing or damaged, and the index resolves the same tree again: apply writes it back", sp.Name, escape.String(pr.rec.Requirements.Path)))
	}
	changes := pypiChanges(sp.Addr, old == nil, oldPyPI(old), pr.rec, pr.oldTree, pr.newTree)
	sp.Changes = append(sp.Changes, changes...)
	if old != nil && len(changes) > 0 {
		sp.Action = Update
	}
}

func oldPyPI(old *lock.Entry) *lock.PyPI {
	if old == nil || old.Mcpform == nil {
		return nil
	}
	return old.Mcpform.PyPI
}

// PyPIPin is a lock record as pins/pypi's Pin.
func PyPIPin(rec *lock.PyPI) *pypi.Pin {
	return &pypi.Pin{Package: rec.Package, Version: rec.Version, SHA256: rec.SHA256, Index: rec.Index,
		Requirements: rec.Requirements.SHA256, Script: rec.Script, EntryPoint: rec.EntryPoint}
}

// StoredRequirements reads the requirements file a PyPI record names,
// beside the lock in lockDir, and checks it against the record: its
// SHA-256, pypi.CheckRequirements, and the top package at the record's
// version and wheel digest.
func StoredRequirements(lockDir string, rec *lock.PyPI) ([]byte, error) {
	p := filepath.Join(lockDir, filepath.FromSlash(rec.Requirements.Path))
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, pypi.MaxRequirementsBytes+1))
	if err != nil {
		return nil, err
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != rec.Requirements.SHA256 {
		return data, fmt.Errorf("the stored requirements file %s is not the one locked (sha256 %s…, locked %s…)", escape.String(p), hex.EncodeToString(sum[:6]), rec.Requirements.SHA256[:12])
	}
	reqs, err := pypi.CheckRequirements(data)
	if err != nil {
		return data, fmt.Errorf("the stored requirements file %s: %w", escape.String(p), err)
	}
	if !slices.Contains(reqs, pypi.Requirement{Name: rec.Package, Version: rec.Version, SHA256: rec.SHA256}) {
		return data, fmt.Errorf("the stored requirements file %s does not pin %s==%s with the locked wheel", escape.String(p), escape.String(rec.Package), escape.String(rec.Version))
	}
	return data, nil
}

// checkExactPyPI is the error of a PyPI runner's argv pypi.Parse refuses:
// for a requirement without an exact version, the command to write
// instead (lang.UnpinnedPackage's), since the plan would lock one release
// and the runner start another.
func checkExactPyPI(s *lang.Server, err error) string {
	var ne *pypi.NotExactError
	if errors.As(err, &ne) {
		fix := fmt.Sprintf("%s ... %s==VERSION ...", ne.Runner, escape.String(ne.Package))
		if u, ok := lang.UnpinnedPackage(s.Command); ok && u.Python {
			fix = lang.HCLList(u.Fixed)
		}
		return fmt.Sprintf("%v; write command = %s, with VERSION the release you reviewed (pip index versions %s lists them); mcpform pins the whole tree and runs it from its cache, and does not ask the index which version you meant",
			err, fix, escape.String(ne.Package))
	}
	return fmt.Sprintf("mcpform pins a PyPI runner's package with its whole tree and cannot pin this command: %v; write it as uvx PACKAGE==VERSION ARGS… (or uvx --from PACKAGE==VERSION SCRIPT ARGS…)", err)
}

// planPyPI pins spec's package and tree and installs it into the cache,
// where the probe starts it: the code probed is the code pinned. A locked
// record of the same package and version whose stored requirements file
// still checks is kept as it is (resolving again would see every new
// transitive release as drift on each plan); otherwise pypi.Resolve pins
// it afresh into a temporary directory, and the file goes into the plan.
func planPyPI(ctx context.Context, spec *pypi.Spec, name string, old *lock.Entry, lockDir, root string) pypiResult {
	fail := func(err error) pypiResult {
		return pypiResult{err: fmt.Errorf("mcpform cannot pin the PyPI package %s==%s and its tree (%w); it needs python3 with venv and pip on PATH, and the index pip is configured with (PIP_INDEX_URL or pip.conf): check them and plan again; the lock is not changed",
			escape.String(spec.Package), escape.String(spec.Version), err)}
	}
	o := oldPyPI(old)
	var stored []byte
	if o != nil {
		data, err := StoredRequirements(lockDir, o)
		if err == nil && o.Package == spec.Package && o.Version == spec.Version && (spec.Command == "" || spec.Command == o.Script) {
			dir := filepath.Join(lockDir, filepath.FromSlash(path.Dir(o.Requirements.Path)))
			pin, err := pypi.Install(ctx, PyPIPin(o), dir, root, pypi.Options{})
			if err != nil {
				return fail(err)
			}
			reqs, _ := pypi.CheckRequirements(data)
			return withArgv(pypiResult{rec: o, packages: len(reqs)}, root, pin, spec)
		}
		stored = data
	}
	tmp, err := os.MkdirTemp("", "mcpform-plan-pypi-")
	if err != nil {
		return pypiResult{err: err}
	}
	defer os.RemoveAll(tmp)
	pin, err := pypi.Resolve(ctx, spec, tmp, pypi.Options{})
	if err != nil {
		return fail(err)
	}
	if pin, err = pypi.Install(ctx, pin, tmp, root, pypi.Options{}); err != nil {
		return fail(err)
	}
	data, err := os.ReadFile(filepath.Join(tmp, pypi.RequirementsName))
	if err != nil {
		return pypiResult{err: err}
	}
	p := path.Join(PyPIDir, name, pypi.RequirementsName)
	rec := &lock.PyPI{Package: pin.Package, Version: pin.Version, SHA256: pin.SHA256, Index: pin.Index,
		Requirements: lock.FilePin{Path: p, SHA256: pin.Requirements}, Script: pin.Script, EntryPoint: pin.EntryPoint}
	if o != nil && *o == *rec {
		// The same tree again (the stored file was lost or damaged): the
		// lock keeps its record, and apply writes the file back.
		rec = o
	}
	r := pypiResult{rec: rec, files: []PlannedFile{{Path: p, Data: data}}, oldTree: stored, newTree: data, packages: len(pin.Tree)}
	return withArgv(r, root, pin, spec)
}

func withArgv(r pypiResult, root string, pin *pypi.Pin, spec *pypi.Spec) pypiResult {
	argv, err := pypi.Argv(root, pin)
	if err != nil {
		return pypiResult{err: err}
	}
	r.argv = append(argv, spec.Args...)
	r.reads = pypi.ReadPaths(root, pin)
	return r
}

// pypiChanges compares the locked PyPI record with the planned one. The
// values are the records, so every format shows both sides.
func pypiChanges(addr string, newServer bool, old, live *lock.PyPI, oldTree, newTree []byte) []Change {
	if live == nil || newServer {
		return nil
	}
	var c Change
	a := addr + ".pypi"
	switch {
	case old == nil:
		c = Change{Addr: a, Action: Create, Rule: "PKG-PYPI-ADDED", After: mustJSON(live),
			Detail: fmt.Sprintf("%s==%s pinned with its whole tree for the first time (requirements sha256 %s…); run starts it from mcpform's cache, not the package runner",
				escape.String(live.Package), escape.String(live.Version), live.Requirements.SHA256[:12])}
	case old.Package != live.Package || old.Version != live.Version:
		c = Change{Addr: a, Action: Update, Rule: "PKG-PYPI-VERSION-CHANGED", Before: mustJSON(old), After: mustJSON(live),
			Detail: fmt.Sprintf("%s==%s is now %s==%s%s", escape.String(old.Package), escape.String(old.Version),
				escape.String(live.Package), escape.String(live.Version), requirementsDiff(oldTree, newTree))}
	case old.SHA256 != live.SHA256:
		c = Change{Addr: a + ".sha256", Action: Update, Rule: "PKG-PYPI-HASH-CHANGED", Before: mustJSON(old.SHA256), After: mustJSON(live.SHA256),
			Detail: fmt.Sprintf("%s==%s is another wheel than the one locked, under the same version (sha256 %s… -> %s…): the index (%s) now serves other code for it",
				escape.String(live.Package), escape.String(live.Version), old.SHA256[:12], live.SHA256[:12], escape.String(indexName(live.Index)))}
	case old.Requirements.SHA256 != live.Requirements.SHA256 || old.Index != live.Index || old.Script != live.Script || old.EntryPoint != live.EntryPoint:
		c = Change{Addr: a + ".requirements", Action: Update, Rule: "PKG-PYPI-TREE-CHANGED", Before: mustJSON(old), After: mustJSON(live),
			Detail: fmt.Sprintf("the tree of %s==%s changed (requirements sha256 %s… -> %s…)%s", escape.String(live.Package), escape.String(live.Version),
				old.Requirements.SHA256[:12], live.Requirements.SHA256[:12], requirementsDiff(oldTree, newTree))}
	default:
		return nil
	}
	r, _ := LookupRule(c.Rule)
	c.Class, c.Grade, c.Security = r.Class, r.Grade, r.Security
	return []Change{c}
}

func indexName(index string) string {
	if index == "" {
		return "find-links"
	}
	return index
}

// requirementsDiff is a short per-package diff of two requirements files
// ("; 2 package(s) of the tree differ: +a==1, b 1 -> 2, c==1 another
// wheel"), at most maxTreeLines packages; "" when either is unknown.
func requirementsDiff(oldTree, newTree []byte) string {
	if oldTree == nil || newTree == nil {
		return ""
	}
	o, err1 := pypi.CheckRequirements(oldTree)
	n, err2 := pypi.CheckRequirements(newTree)
	if err1 != nil || err2 != nil {
		return ""
	}
	om, nm := map[string]pypi.Requirement{}, map[string]pypi.Requirement{}
	for _, r := range o {
		om[r.Name] = r
	}
	for _, r := range n {
		nm[r.Name] = r
	}
	var lines []string
	for _, p := range n {
		if q, ok := om[p.Name]; !ok {
			lines = append(lines, "+"+p.Name+"=="+p.Version)
		} else if q.Version != p.Version {
			lines = append(lines, p.Name+" "+q.Version+" -> "+p.Version)
		} else if q.SHA256 != p.SHA256 {
			lines = append(lines, p.Name+"=="+p.Version+" another wheel")
		}
	}
	for _, q := range o {
		if _, ok := nm[q.Name]; !ok {
			lines = append(lines, "-"+q.Name+"=="+q.Version)
		}
	}
	slices.Sort(lines)
	if len(lines) == 0 {
		return ""
	}
	const maxTreeLines = 20
	total, more := len(lines), ""
	if len(lines) > maxTreeLines {
		more = fmt.Sprintf(", and %d more", len(lines)-maxTreeLines)
		lines = lines[:maxTreeLines]
	}
	return fmt.Sprintf("; %d package(s) of the tree differ: %s%s", total, escape.String(strings.Join(lines, ", ")), more)
}
