package lang

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// InstallOptions control InstallModules.
type InstallOptions struct {
	// Upgrade fetches every git module again, even when the manifest
	// already records the same source.
	Upgrade bool
	// Log receives one line per module ("- github: fetched … at v1.0.0
	// (commit 1a2b3c4)"); nil discards.
	Log io.Writer
	// Git is the git program; "" means "git" from PATH.
	Git string
}

// InstallModules is mcpform init's work: it walks the module tree of the
// configuration in dir and fetches every git module that is not yet in
// .mcpform/modules (or whose source changed), then records what it fetched
// in .mcpform/modules/modules.json (source, ref, commit). Local modules
// need nothing. It evaluates nothing; module sources are literals.
//
// This is the only function in lang that runs a program or uses the
// network.
func InstallModules(ctx context.Context, dir string, opts InstallOptions) ([]ManifestEntry, map[string][]byte, hcl.Diagnostics) {
	dir = filepath.Clean(dir)
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.Git == "" {
		opts.Git = "git"
	}
	l := &loader{fs: osFS{}, root: dir, files: map[string][]byte{}}
	old := l.readManifest()
	diags := l.mdiags
	for _, d := range diags {
		// init is the cure for a broken manifest: start afresh.
		d.Severity = hcl.DiagWarning
		d.Detail = strings.TrimSuffix(d.Detail, ` Run "mcpform init" to fetch the modules again.`) + " Every git module is fetched again."
	}
	inst := &installer{l: l, opts: opts, ctx: ctx, old: old}
	root, d := l.parseModule(dir, nil)
	diags = append(diags, d...)
	if root == nil {
		return nil, l.files, diags
	}
	if root.noFiles {
		return nil, l.files, append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "No configuration files",
			Detail:   fmt.Sprintf("mcpform reads %s and *%s files in %s, and found none.", ConfigFile, configSuffix, displayDir(dir)),
		})
	}
	diags = append(diags, inst.walk(root)...)
	sortEntries(inst.entries)
	if !diags.HasErrors() || len(inst.entries) > 0 {
		if err := inst.writeManifest(); err != nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot write module manifest", Detail: err.Error()})
		}
	}
	return inst.entries, l.files, diags
}

type installer struct {
	l       *loader
	opts    InstallOptions
	ctx     context.Context
	old     *manifest
	entries []ManifestEntry
}

func (in *installer) walk(m *module) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, b := range m.calls {
		content, _, d := b.Body.PartialContent(moduleCallSchema)
		diags = append(diags, d...)
		a, ok := content.Attributes["source"]
		if !ok {
			continue
		}
		src, ok, d := literalString(a, "source")
		diags = append(diags, d...)
		if !ok {
			continue
		}
		modPath := append(append([]string(nil), m.path...), b.Labels[0])
		if len(modPath) > maxModuleDepth {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Modules nested too deeply", Detail: fmt.Sprintf("Module %s is nested more than %d deep; a module probably includes itself.", strings.Join(modPath, "."), maxModuleDepth), Subject: a.Expr.Range().Ptr()})
			continue
		}
		source, err := parseSource(src)
		if err != nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid module source", Detail: fmt.Sprintf("%q: %v", src, err), Subject: a.Expr.Range().Ptr()})
			continue
		}
		var dir, pkgRoot string
		if source.IsGit() {
			e, err := in.fetch(strings.Join(modPath, "."), src, source)
			if err != nil {
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Cannot fetch module",
					Detail:   fmt.Sprintf("Fetching module %q from %s: %v", strings.Join(modPath, "."), src, err),
					Subject:  a.Expr.Range().Ptr(),
				})
				continue
			}
			pkgRoot = cleanJoin(in.l.root, e.Dir)
			dir = pkgRoot
			if source.Subdir != "" {
				dir = cleanJoin(pkgRoot, source.Subdir)
			}
		} else {
			dir = cleanJoin(m.dir, source.Local)
			pkgRoot = m.pkgRoot
			if pkgRoot != "" && !within(pkgRoot, dir) {
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid module source", Detail: fmt.Sprintf("%q leaves the git module it is written in.", src), Subject: a.Expr.Range().Ptr()})
				continue
			}
		}
		cyclic := false
		for p := m; p != nil; p = p.parent {
			cyclic = cyclic || p.dir == dir
		}
		if cyclic {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Module cycle", Detail: fmt.Sprintf("Module %q sources %s, which is this module itself or one that includes it.", b.Labels[0], src), Subject: a.Expr.Range().Ptr()})
			continue
		}
		child, d := in.l.parseModule(dir, modPath)
		diags = append(diags, d...)
		if child == nil {
			diags[len(diags)-1].Subject = a.Expr.Range().Ptr()
			continue
		}
		child.parent, child.pkgRoot = m, pkgRoot
		diags = append(diags, in.walk(child)...)
	}
	return diags
}

// fetch clones source into .mcpform/modules/<key> unless the manifest
// already has it, and returns its manifest entry.
func (in *installer) fetch(key, src string, source Source) (ManifestEntry, error) {
	rel := ModulesDir + "/" + key
	dst := cleanJoin(in.l.root, rel)
	if e := in.old.find(key); e != nil && !in.opts.Upgrade && e.Source == src && e.Dir == rel {
		if _, err := os.Stat(dst); err == nil {
			in.entries = append(in.entries, *e)
			fmt.Fprintf(in.opts.Log, "- %s: %s at %s (commit %s), already fetched\n", key, source.URL, source.Ref, short(e.Commit))
			return *e, nil
		}
	}
	parent := filepath.Dir(dst)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return ManifestEntry{}, err
	}
	tmp, err := os.MkdirTemp(parent, ".fetch-"+key+"-")
	if err != nil {
		return ManifestEntry{}, err
	}
	defer os.RemoveAll(tmp)
	repo := filepath.Join(tmp, "repo")
	if _, err := in.git("", "clone", "--quiet", "--no-checkout", "--", source.URL, repo); err != nil {
		return ManifestEntry{}, err
	}
	commit, err := in.git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", source.Ref+"^{commit}")
	if err != nil {
		commit, err = in.git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", "origin/"+source.Ref+"^{commit}")
		if err != nil {
			return ManifestEntry{}, fmt.Errorf("ref %q is not a tag, branch or commit of the repository", source.Ref)
		}
	}
	if _, err := in.git(repo, "-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", commit); err != nil {
		return ManifestEntry{}, err
	}
	// A plain copy: the manifest records the commit, and no stray .git
	// makes the module look like a repository of its own.
	if err := os.RemoveAll(filepath.Join(repo, ".git")); err != nil {
		return ManifestEntry{}, err
	}
	if source.Subdir != "" {
		if st, err := os.Stat(filepath.Join(repo, filepath.FromSlash(source.Subdir))); err != nil || !st.IsDir() {
			return ManifestEntry{}, fmt.Errorf("the repository has no directory %q at %s", source.Subdir, source.Ref)
		}
	}
	if err := os.RemoveAll(dst); err != nil {
		return ManifestEntry{}, err
	}
	if err := os.Rename(repo, dst); err != nil {
		return ManifestEntry{}, err
	}
	e := ManifestEntry{Key: key, Source: src, Ref: source.Ref, Commit: commit, Dir: rel}
	in.entries = append(in.entries, e)
	fmt.Fprintf(in.opts.Log, "- %s: fetched %s at %s (commit %s)\n", key, source.URL, source.Ref, short(commit))
	return e, nil
}

func (in *installer) git(dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(in.ctx, in.opts.Git, args...)
	cmd.Dir = dir
	// Never ask for a password on a terminal: init must not hang.
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", fmt.Errorf("git %s: %s", args[0], msg)
	}
	return strings.TrimSpace(out.String()), nil
}

func (in *installer) writeManifest() error {
	name := filepath.Join(in.l.root, filepath.FromSlash(ManifestFile))
	// Remove modules no longer reached, so the directory matches the file.
	keep := map[string]bool{}
	for _, e := range in.entries {
		keep[e.Key] = true
	}
	for _, e := range in.old.Modules {
		if !keep[e.Key] && e.Dir == ModulesDir+"/"+e.Key && !strings.Contains(e.Key, "/") && !strings.HasPrefix(e.Key, ".") {
			os.RemoveAll(cleanJoin(in.l.root, e.Dir))
		}
	}
	if len(in.entries) == 0 && len(in.old.Modules) == 0 {
		return nil
	}
	b, err := json.MarshalIndent(manifest{Modules: append([]ManifestEntry{}, in.entries...)}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}
