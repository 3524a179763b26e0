package plan

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/lang"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/pins/npm"
	"github.com/mcpform/mcpform/pins/provenance"
)

// NPMDir is where apply stores each npm server's pinned tree, relative to
// the lock's directory: NPMDir/<server>/package-lock.json and the
// package.json beside it (docs/LOCKFILE.md, "npm trees").
const NPMDir = ".mcpform/npm"

// PlannedFile is a file apply writes beside the lock before the lock
// itself: an npm server's package.json and package-lock.json, which plan
// resolved into a temporary directory (plan writes nothing but -out).
type PlannedFile struct {
	// Path is slash-separated and relative to the lock's directory,
	// always under NPMDir.
	Path string `json:"path"`
	Data []byte `json:"data"`
}

// npmResult is what plan pinned of an npm runner's server before its probe.
type npmResult struct {
	rec *lock.NPM
	// files are the generated package.json and package-lock.json when the
	// tree was resolved afresh; nil when the locked record was kept.
	files []PlannedFile
	// oldTree and newTree are the stored and the fresh lockfile, for the
	// per-package diff of a changed tree (nil when unknown).
	oldTree, newTree []byte
	// packages counts the fresh tree's packages (0 when kept).
	packages int
	// entry and bin are the tree's cache entry and the absolute file of
	// its bin there; argv is what the probe starts: node with the bin and
	// the runner's arguments, the pinned code, as run starts it.
	entry, bin string
	argv       []string
	// scripts are the install scripts of the installed tree, by package,
	// for the plan to show (read when rec lists any).
	scripts []npm.PackageScripts
	err     error
}

// allowScripts records mcp.hcl's allow_install_scripts in r's record, in a
// copy when it changes a locked record.
func (r *npmResult) allowScripts(allow bool) {
	if r.rec == nil || r.rec.AllowInstallScripts == allow {
		return
	}
	rec := *r.rec
	rec.AllowInstallScripts = allow
	r.rec = &rec
}

// planNPMServer is the plan of a command server that runs an npm package
// runner (npm.Parse): its tree pinned and installed into the cache under
// cacheRoot. ok is false for any other command; the result's err is the
// server's plan error. A server that is no npm runner cannot allow
// install scripts. lookupEnv reads the environment the probe passes on
// (nil: mcpform's).
func planNPMServer(ctx context.Context, s *lang.Server, old *lock.Entry, lockDir, cacheRoot string, lookupEnv func(string) (string, bool)) (r npmResult, ok bool) {
	spec, ok, err := npm.Parse(s.Command)
	switch {
	case !ok && s.AllowInstallScripts:
		return npmResult{err: errors.New("allow_install_scripts = true: the command is not an npm package runner (npx -y PACKAGE@VERSION…), whose tree mcpform installs, so there are no install scripts for it to allow; remove allow_install_scripts")}, true
	case !ok:
		return r, false
	case err != nil:
		return npmResult{err: fmt.Errorf("mcpform pins an npm runner's package with its whole tree and cannot pin this command: %v; write it as npx -y PACKAGE@VERSION ARGS…", err)}, true
	}
	if err := npm.CheckEnv(s.Env); err != nil {
		return npmResult{err: err}, true
	}
	getenv := func(k string) string {
		if lookupEnv == nil {
			return os.Getenv(k)
		}
		v, _ := lookupEnv(k)
		return v
	}
	if err := npm.CheckGlobals(s.Env, getenv); err != nil {
		return npmResult{err: err}, true
	}
	r = planNPM(ctx, spec, s.Name, old, lockDir)
	r.allowScripts(s.AllowInstallScripts)
	if r.err == nil {
		r.install(ctx, lockDir, cacheRoot)
	}
	if r.err == nil {
		r.argv = append([]string{"node", r.bin}, spec.Args...)
	}
	return r, true
}

// recordNPM puts a probed npm server's record and files into its plan,
// with its changes.
func recordNPM(p *Plan, sp *ServerPlan, nr npmResult, old *lock.Entry) {
	sp.Entry.Mcpform.NPM = nr.rec
	sp.Files = append(sp.Files, nr.files...)
	if old == nil && len(sp.Changes) > 0 && sp.Changes[0].Rule == "CFG-SERVER-ADDED" {
		// A new server's pins are written with it; the plan says what
		// its tree is.
		// The registry too: npm's configuration (a project's .npmrc
		// among it) chooses it, and every package comes from it.
		sp.Changes[0].Detail += fmt.Sprintf(", and pins %s@%s with its whole tree (%d packages from %s, lockfile sha256 %s…), which run starts from mcpform's cache; %s",
			escape.String(nr.rec.Package), escape.String(nr.rec.Version), nr.packages, escape.String(nr.rec.Registry), nr.rec.Lockfile.SHA256[:12], provenanceText(nr.rec.Provenance))
	}
	if old != nil && nr.files != nil && nr.rec == oldNPM(old) {
		p.Notes = append(p.Notes, fmt.Sprintf("server %q: the stored lockfile %s was missing or damaged, and the registry resolves the same tree again: apply writes it back", sp.Name, escape.String(nr.rec.Lockfile.Path)))
	}
	changes := npmChanges(sp.Addr, old == nil, oldNPM(old), nr.rec, nr.oldTree, nr.newTree, nr.scripts)
	sp.Changes = append(sp.Changes, changes...)
	if old != nil && len(changes) > 0 {
		sp.Action = Update
	}
}

// NPMPin is a locked npm record as pins/npm's Pin.
func NPMPin(rec *lock.NPM) *npm.Pin {
	return &npm.Pin{Package: rec.Package, Version: rec.Version, Integrity: rec.Integrity, Registry: rec.Registry,
		Lockfile: rec.Lockfile.SHA256, Bin: rec.Bin, InstallScripts: rec.InstallScripts, RunScripts: rec.AllowInstallScripts}
}

func oldNPM(old *lock.Entry) *lock.NPM {
	if old == nil || old.Mcpform == nil {
		return nil
	}
	return old.Mcpform.NPM
}

// StoredLockfile reads the lockfile an npm record names, beside the lock in
// lockDir, and checks it against the record: its SHA-256, npm.CheckLockfile
// against the record's registry, and that its top package is the record's
// package, version and integrity (CheckTop).
func StoredLockfile(lockDir string, rec *lock.NPM) ([]byte, error) {
	p := filepath.Join(lockDir, filepath.FromSlash(rec.Lockfile.Path))
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != rec.Lockfile.SHA256 {
		return data, fmt.Errorf("the stored lockfile %s is not the one locked (sha256 %s…, locked %s…)", escape.String(p), hex.EncodeToString(sum[:6]), rec.Lockfile.SHA256[:12])
	}
	lf, err := npm.CheckLockfile(data, rec.Registry)
	if err == nil {
		err = lf.CheckTop(rec.Package, rec.Version, rec.Integrity)
	}
	if err != nil {
		return data, fmt.Errorf("the stored lockfile %s: %w", escape.String(p), err)
	}
	return data, nil
}

// planNPM pins spec's package and tree. A locked record of the same package
// and version whose stored lockfile still has its digest and passes
// CheckLockfile is kept as it is: resolving again would see every new
// transitive release as drift on each plan. Otherwise npm.Resolve pins it
// afresh into a temporary directory, and the files go into the plan.
func planNPM(ctx context.Context, spec *npm.Spec, name string, old *lock.Entry, lockDir string) npmResult {
	o := oldNPM(old)
	var stored []byte
	if o != nil {
		data, err := StoredLockfile(lockDir, o)
		if err == nil && o.Package == spec.Package && o.Version == spec.Version {
			return npmResult{rec: o}
		}
		stored = data
	}
	tmp, err := os.MkdirTemp("", "mcpform-plan-npm-")
	if err != nil {
		return npmResult{err: err}
	}
	defer os.RemoveAll(tmp)
	pin, err := npm.Resolve(ctx, spec, tmp)
	if err != nil {
		return npmResult{err: fmt.Errorf("mcpform cannot pin the npm package %s@%s and its tree (%w); it needs the npm registry (npm_config_registry or .npmrc) and npm on PATH: check them (npm ping) and plan again; the lock is not changed",
			escape.String(spec.Package), escape.String(spec.Version), err)}
	}
	dir := path.Join(NPMDir, name)
	r := npmResult{rec: &lock.NPM{Package: pin.Package, Version: pin.Version, Integrity: pin.Integrity, Registry: pin.Registry,
		Lockfile: lock.FilePin{Path: path.Join(dir, npm.LockfileName), SHA256: pin.Lockfile},
		Bin:      pin.Bin, InstallScripts: pin.InstallScripts}, oldTree: stored, packages: pin.Packages}
	if r.rec.Provenance, err = npmProvenance(ctx, pin); err != nil {
		return npmResult{err: err}
	}
	for _, f := range []string{npm.PackageJSON, npm.LockfileName} {
		data, err := os.ReadFile(filepath.Join(tmp, f))
		if err != nil {
			return npmResult{err: err}
		}
		r.files = append(r.files, PlannedFile{Path: path.Join(dir, f), Data: data})
		if f == npm.LockfileName {
			r.newTree = data
		}
	}
	if o != nil && o.Lockfile.SHA256 == r.rec.Lockfile.SHA256 && o.Package == r.rec.Package && o.Version == r.rec.Version &&
		o.Integrity == r.rec.Integrity && o.Registry == r.rec.Registry && o.Bin == r.rec.Bin && slices.Equal(o.InstallScripts, r.rec.InstallScripts) &&
		sameProvenance(o.Provenance, r.rec.Provenance) {
		// The same tree again (the stored file was lost or damaged):
		// the lock keeps its record, and apply writes the file back.
		r.rec = o
	}
	return r
}

// attestationRegistry, when set (by tests only), is the registry whose
// attestations endpoint npmProvenance reads instead of the record's: a
// test resolves the tree on the real registry and serves real provenance
// bundles itself (the registry reachable from the tests serves none).
var attestationRegistry string

// npmProvenance fetches and verifies the provenance the registry publishes
// for pin's top package (pins/provenance): nil when it publishes none.
// Any failure is the server's plan error: a provenance that does not
// verify is never locked, nor silently dropped.
func npmProvenance(ctx context.Context, pin *npm.Pin) (*lock.Provenance, error) {
	reg := pin.Registry
	if attestationRegistry != "" {
		reg = attestationRegistry
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	atts, err := provenance.Fetch(ctx, nil, reg, pin.Package, pin.Version)
	if err != nil {
		return nil, fmt.Errorf("mcpform cannot read the provenance attestations of %s@%s from the registry (%w); plan again when the registry answers; the lock is not changed",
			escape.String(pin.Package), escape.String(pin.Version), err)
	}
	if atts == nil {
		return nil, nil
	}
	tr, _, err := provenance.TrustedRoot()
	if err != nil {
		return nil, fmt.Errorf("mcpform cannot verify the provenance of %s@%s: %w; the lock is not changed", escape.String(pin.Package), escape.String(pin.Version), err)
	}
	p, err := provenance.Verify(atts, pin.Package, pin.Version, pin.Integrity, tr)
	if err != nil || p == nil {
		return nil, err
	}
	return &lock.Provenance{Repository: p.Repository, Workflow: p.Workflow, Commit: p.Commit}, nil
}

func sameProvenance(a, b *lock.Provenance) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// provenanceText says where a record's tarball was built, for a plan.
func provenanceText(p *lock.Provenance) string {
	if p == nil {
		return "the registry publishes no provenance for it"
	}
	return fmt.Sprintf("its provenance verifies: built from %s by %s", escape.String(p.Repository), escape.String(p.Workflow))
}

// provenanceChanges compares the provenance of two records of a locked
// server: another repository, another workflow of the same one, a
// provenance gained or lost. The commit alone is no change: it differs
// with every release.
func provenanceChanges(a string, old, live *lock.NPM) []Change {
	o, l := old.Provenance, live.Provenance
	what := escape.String(live.Package) + "@" + escape.String(live.Version)
	switch {
	case o == nil && l != nil:
		return []Change{{Addr: a, Action: Create, Rule: "PKG-NPM-PROVENANCE-ADDED", After: mustJSON(l),
			Detail: fmt.Sprintf("%s has a verified provenance: built from %s by %s", what, escape.String(l.Repository), escape.String(l.Workflow))}}
	case o != nil && l == nil:
		return []Change{{Addr: a, Action: Delete, Rule: "PKG-NPM-PROVENANCE-REMOVED", Before: mustJSON(o),
			Detail: fmt.Sprintf("the locked tarball was built from %s by %s; the registry publishes no provenance for %s", escape.String(o.Repository), escape.String(o.Workflow), what)}}
	case o == nil || l == nil:
		return nil
	case o.Repository != l.Repository:
		return []Change{{Addr: a + ".repository", Action: Update, Rule: "PKG-NPM-PROVENANCE-CHANGED", Before: mustJSON(o), After: mustJSON(l),
			Detail: fmt.Sprintf("%s was built from %s, not from the locked %s (by %s)", what, escape.String(l.Repository), escape.String(o.Repository), escape.String(l.Workflow))}}
	case o.Workflow != l.Workflow:
		return []Change{{Addr: a + ".workflow", Action: Update, Rule: "PKG-NPM-PROVENANCE-WORKFLOW-CHANGED", Before: mustJSON(o), After: mustJSON(l),
			Detail: fmt.Sprintf("%s was built from %s by %s, not by the locked %s", what, escape.String(l.Repository), escape.String(l.Workflow), escape.String(o.Workflow))}}
	}
	return nil
}

// install puts r's pinned tree into the cache under cacheRoot (or checks
// the entry already there), from the planned lockfile or else the one
// stored beside the lock in lockDir, and records where its bin is: the
// probe starts exactly the code the lock pins, with node, from the cache,
// as run starts it, never the runner, which would resolve the tree afresh.
// A failure is r's error: the server cannot be probed as run starts it.
func (r *npmResult) install(ctx context.Context, lockDir, cacheRoot string) {
	if cacheRoot == "" {
		r.err = errors.New("this plan has no npm cache to install the pinned tree into, and mcpform probes an npm server only from its pinned tree")
		return
	}
	dir := filepath.Join(lockDir, filepath.FromSlash(path.Dir(r.rec.Lockfile.Path)))
	if r.files != nil {
		tmp, err := os.MkdirTemp("", "mcpform-plan-npm-")
		if err != nil {
			r.err = err
			return
		}
		defer os.RemoveAll(tmp)
		for _, f := range r.files {
			if err := os.WriteFile(filepath.Join(tmp, path.Base(f.Path)), f.Data, 0o644); err != nil {
				r.err = err
				return
			}
		}
		dir = tmp
	}
	pin := NPMPin(r.rec)
	bin, err := npm.Install(ctx, pin, dir, cacheRoot)
	if err != nil {
		r.err = fmt.Errorf("mcpform pinned %s@%s and cannot install its tree into %s to probe it from there (%w); the lock is not changed",
			escape.String(r.rec.Package), escape.String(r.rec.Version), cacheRoot, err)
		return
	}
	r.entry, r.bin = npm.EntryDir(cacheRoot, pin), bin
	if len(pin.InstallScripts) > 0 {
		if r.scripts, err = npm.ScriptsOf(cacheRoot, pin); err != nil {
			r.err = fmt.Errorf("mcpform installed %s@%s and cannot read its install scripts for the plan (%w); the lock is not changed",
				escape.String(r.rec.Package), escape.String(r.rec.Version), err)
		}
	}
}

// npmChanges compares the locked npm record with the planned one. The
// values are the records, so every format shows both sides.
func npmChanges(addr string, newServer bool, old, live *lock.NPM, oldTree, newTree []byte, scripts []npm.PackageScripts) []Change {
	if live == nil {
		return nil
	}
	var out []Change
	add := func(c Change) {
		r, _ := LookupRule(c.Rule)
		c.Class, c.Grade, c.Security = r.Class, r.Grade, r.Security
		out = append(out, c)
	}
	a := addr + ".npm"
	switch {
	case newServer:
	case old == nil:
		add(Change{Addr: a, Action: Create, Rule: "PKG-NPM-ADDED", After: mustJSON(live),
			Detail: fmt.Sprintf("%s@%s pinned with its whole tree for the first time (lockfile sha256 %s…); run starts it from mcpform's cache, not %s",
				escape.String(live.Package), escape.String(live.Version), live.Lockfile.SHA256[:12], "the package runner")})
	case old.Package != live.Package || old.Version != live.Version:
		add(Change{Addr: a, Action: Update, Rule: "PKG-NPM-VERSION-CHANGED", Before: mustJSON(old), After: mustJSON(live),
			Detail: fmt.Sprintf("%s@%s is now %s@%s%s", escape.String(old.Package), escape.String(old.Version),
				escape.String(live.Package), escape.String(live.Version), treeDiff(oldTree, newTree, old.Registry, live.Registry))})
	case old.Integrity != live.Integrity:
		add(Change{Addr: a + ".integrity", Action: Update, Rule: "PKG-NPM-INTEGRITY-CHANGED", Before: mustJSON(old.Integrity), After: mustJSON(live.Integrity),
			Detail: fmt.Sprintf("%s@%s is another tarball than the one locked, under the same version: the registry (%s) now serves other code for it",
				escape.String(live.Package), escape.String(live.Version), escape.String(live.Registry))})
	case old.Lockfile.SHA256 != live.Lockfile.SHA256 || old.Registry != live.Registry || old.Bin != live.Bin:
		add(Change{Addr: a + ".lockfile", Action: Update, Rule: "PKG-NPM-TREE-CHANGED", Before: mustJSON(old), After: mustJSON(live),
			Detail: fmt.Sprintf("the tree of %s@%s changed (lockfile sha256 %s… -> %s…)%s", escape.String(live.Package), escape.String(live.Version),
				old.Lockfile.SHA256[:12], live.Lockfile.SHA256[:12], treeDiff(oldTree, newTree, old.Registry, live.Registry))})
	}
	if old != nil {
		for _, c := range provenanceChanges(a+".provenance", old, live) {
			add(c)
		}
	}
	if len(live.InstallScripts) > 0 && (old == nil || !slices.Equal(old.InstallScripts, live.InstallScripts)) {
		what := "which mcpform does not run (npm ci --ignore-scripts; allow_install_scripts = true in the server's block runs them); a server that needs one may not work"
		if live.AllowInstallScripts {
			what = "which run with your rights when mcpform installs the tree (allow_install_scripts = true)"
		}
		c := Change{Addr: a + ".installScripts", Action: Update, Rule: "PKG-NPM-INSTALL-SCRIPTS", After: mustJSON(live.InstallScripts),
			Detail: fmt.Sprintf("%d package(s) of the tree have install scripts, %s: %s", len(live.InstallScripts), what, scriptList(live.InstallScripts, scripts))}
		if scripts != nil {
			c.After = mustJSON(scripts)
		}
		add(c)
	}
	wasAllowed := old != nil && old.AllowInstallScripts
	switch {
	case live.AllowInstallScripts && !wasAllowed:
		add(Change{Addr: a + ".allowInstallScripts", Action: Update, Rule: "PKG-NPM-SCRIPTS-ALLOWED", Before: mustJSON(false), After: mustJSON(true),
			Detail: fmt.Sprintf("allow_install_scripts = true: mcpform installs %s@%s with the install scripts of its tree run, with your rights: %s",
				escape.String(live.Package), escape.String(live.Version), scriptList(live.InstallScripts, scripts))})
	case !live.AllowInstallScripts && wasAllowed:
		add(Change{Addr: a + ".allowInstallScripts", Action: Update, Rule: "PKG-NPM-SCRIPTS-DISALLOWED", Before: mustJSON(true), After: mustJSON(false),
			Detail: "allow_install_scripts removed: the tree is installed again without running its install scripts"})
	}
	return out
}

// maxScriptText bounds how much of one install script a plan shows.
const maxScriptText = 300

// scriptList says which packages have install scripts and, when the
// installed tree was read, what each runs: `node_modules/esbuild
// (postinstall: "node install.js")`. The texts are the registry's,
// escaped and cut at maxScriptText.
func scriptList(paths []string, scripts []npm.PackageScripts) string {
	if len(paths) == 0 {
		return "the tree has none today"
	}
	hooks := map[string][]npm.Hook{}
	for _, ps := range scripts {
		hooks[ps.Path] = ps.Hooks
	}
	var parts []string
	for _, p := range paths {
		part := escape.String(p)
		var hs []string
		for _, h := range hooks[p] {
			text := h.Command
			if len(text) > maxScriptText {
				text = text[:maxScriptText] + "…"
			}
			hs = append(hs, fmt.Sprintf("%s: \"%s\"", h.Name, escape.String(text)))
		}
		if len(hs) > 0 {
			part += " (" + strings.Join(hs, "; ") + ")"
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, ", ")
}

// treeDiff is a short per-package diff of two lockfiles (": +a@1, -b@2,
// c 1 -> 2"), at most maxTreeLines packages; "" when either is unknown.
func treeDiff(oldTree, newTree []byte, oldReg, newReg string) string {
	if oldTree == nil || newTree == nil {
		return ""
	}
	o, err1 := npm.CheckLockfile(oldTree, oldReg)
	n, err2 := npm.CheckLockfile(newTree, newReg)
	if err1 != nil || err2 != nil {
		return ""
	}
	index := func(l *npm.Lockfile) map[string]npm.Package {
		m := map[string]npm.Package{}
		for _, p := range l.Packages {
			m[p.Path] = p
		}
		return m
	}
	om, nm := index(o), index(n)
	var lines []string
	short := func(p string) string { return strings.TrimPrefix(p, "node_modules/") }
	for _, p := range n.Packages {
		if q, ok := om[p.Path]; !ok {
			lines = append(lines, "+"+short(p.Path)+"@"+p.Version)
		} else if q.Version != p.Version {
			lines = append(lines, short(p.Path)+" "+q.Version+" -> "+p.Version)
		} else if q.Integrity != p.Integrity {
			lines = append(lines, short(p.Path)+"@"+p.Version+" another tarball")
		}
	}
	for _, q := range o.Packages {
		if _, ok := nm[q.Path]; !ok {
			lines = append(lines, "-"+short(q.Path)+"@"+q.Version)
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
