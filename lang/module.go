package lang

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// ModulesDir is where mcpform init puts git modules, relative to the root;
// ManifestFile records what it fetched.
const (
	ModulesDir   = ".mcpform/modules"
	ManifestFile = ".mcpform/modules/modules.json"
	// maxModuleDepth bounds nesting, so a module that sources itself
	// through a git loop cannot run forever.
	maxModuleDepth = 16
)

// Source is a parsed module source.
type Source struct {
	// Local is the relative path of a local source ("./modules/x").
	Local string
	// Git sources: the repository URL, the directory inside it, the ref.
	URL, Subdir, Ref string
}

// IsGit reports whether s is a git source.
func (s Source) IsGit() bool { return s.URL != "" }

// parseSource parses a module source: a local path starting with ./ or
// ../, or git::URL[//subdir]?ref=REF where URL is https://, ssh://,
// file:// or user@host:path.
func parseSource(src string) (Source, error) {
	switch {
	case strings.HasPrefix(src, "./") || strings.HasPrefix(src, "../") || src == "." || src == "..":
		return Source{Local: src}, nil
	case strings.HasPrefix(src, "git::"):
		return parseGitSource(strings.TrimPrefix(src, "git::"))
	case strings.HasPrefix(src, "/"):
		return Source{}, fmt.Errorf("an absolute path would make the configuration depend on this machine; write a path relative to this directory, starting with ./ or ../")
	}
	hint := ""
	if !strings.Contains(src, "://") && !strings.Contains(src, "::") && src != "" {
		hint = fmt.Sprintf(" Did you mean \"./%s\"?", src)
	}
	return Source{}, fmt.Errorf("mcpform reads local paths starting with ./ or ../ and git sources written git::URL//subdir?ref=TAG, for example \"git::https://github.com/acme/mcp-modules.git//github?ref=v1.2.0\".%s", hint)
}

func parseGitSource(s string) (Source, error) {
	raw, query, _ := strings.Cut(s, "?")
	q, err := url.ParseQuery(query)
	if err != nil {
		return Source{}, fmt.Errorf("the query %q is malformed: %v", query, err)
	}
	for k := range q {
		if k != "ref" {
			return Source{}, fmt.Errorf("unsupported source argument %q; only ?ref=TAG is", k)
		}
	}
	ref := q.Get("ref")
	if ref == "" || len(q["ref"]) > 1 {
		return Source{}, fmt.Errorf("a git source needs exactly one ?ref=TAG (a tag or commit), so that every machine fetches the same module")
	}
	if strings.HasPrefix(ref, "-") || strings.ContainsAny(ref, " \t\n\x00") {
		return Source{}, fmt.Errorf("ref %q is not a git ref", ref)
	}
	start := 0
	switch {
	case strings.HasPrefix(raw, "https://"), strings.HasPrefix(raw, "ssh://"), strings.HasPrefix(raw, "file://"):
		start = strings.Index(raw, "://") + 3
	case strings.HasPrefix(raw, "http://"):
		return Source{}, fmt.Errorf("plain http is not allowed for git sources; use https://")
	case strings.Contains(raw, "://") || strings.Contains(raw, "::"):
		return Source{}, fmt.Errorf("unsupported git URL scheme in %q; use https://, ssh://, file:// or user@host:path", raw)
	case strings.HasPrefix(raw, "-") || !strings.Contains(raw, "@") || !strings.Contains(raw, ":"):
		return Source{}, fmt.Errorf("%q is not a git URL; use https://, ssh://, file:// or user@host:path", raw)
	}
	repo, subdir := raw, ""
	if i := strings.Index(raw[start:], "//"); i >= 0 {
		repo, subdir = raw[:start+i], raw[start+i+2:]
		// file:///abs has three slashes; the subdir separator comes later.
		if subdir == "" {
			return Source{}, fmt.Errorf("the subdirectory after // is empty")
		}
		if path.IsAbs(subdir) || path.Clean(subdir) != strings.TrimSuffix(subdir, "/") || subdir == ".." || strings.HasPrefix(subdir, "../") {
			return Source{}, fmt.Errorf("the subdirectory %q must be a clean relative path inside the repository", subdir)
		}
	}
	if repo == "" || strings.HasSuffix(repo, "://") {
		return Source{}, fmt.Errorf("the repository URL is empty")
	}
	return Source{URL: repo, Subdir: strings.TrimSuffix(subdir, "/"), Ref: ref}, nil
}

// manifest is .mcpform/modules/modules.json.
type manifest struct {
	Modules []ManifestEntry `json:"modules"`
}

// ManifestEntry records one fetched git module.
type ManifestEntry struct {
	// Key is the module path joined by dots: "github", "github.inner".
	Key string `json:"key"`
	// Source is the source as written in the module block.
	Source string `json:"source"`
	// Ref and Commit are the ref asked for and the commit it resolved to.
	Ref    string `json:"ref"`
	Commit string `json:"commit"`
	// Dir is the fetched repository, relative to the root, slash-separated.
	Dir string `json:"dir"`
}

func (m *manifest) find(key string) *ManifestEntry {
	if m == nil {
		return nil
	}
	for i := range m.Modules {
		if m.Modules[i].Key == key {
			return &m.Modules[i]
		}
	}
	return nil
}

// readManifest loads the manifest once; a missing one is an empty one.
func (l *loader) readManifest() *manifest {
	if l.manifest != nil {
		return l.manifest
	}
	l.manifest = &manifest{}
	name := filepath.Join(l.root, filepath.FromSlash(ManifestFile))
	b, err := l.fs.ReadFile(name)
	if err != nil {
		return l.manifest
	}
	if err := json.Unmarshal(b, l.manifest); err != nil {
		l.manifest = &manifest{}
		l.mdiags = append(l.mdiags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid module manifest",
			Detail:   fmt.Sprintf("%s is not valid (%v). Run \"mcpform init\" to fetch the modules again.", name, err),
		})
	}
	return l.manifest
}

var moduleCallSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "source", Required: true}},
}

// evalCall evaluates a module block: resolves its source, parses the
// module, evaluates its inputs in the caller's scope, and recurses.
func (l *loader) evalCall(s *scope, b *hcl.Block) hcl.Diagnostics {
	name := b.Labels[0]
	content, rest, diags := b.Body.PartialContent(moduleCallSchema)
	inputs, d := rest.JustAttributes()
	diags = append(diags, d...)
	a, ok := content.Attributes["source"]
	if !ok || diags.HasErrors() {
		return diags
	}
	src, ok, d := literalString(a, "source")
	if !ok {
		if len(d) > 0 {
			d[0].Detail += " A module source must be a literal string: mcpform init reads it without evaluating anything."
		}
		return append(diags, d...)
	}
	modPath := append(append([]string(nil), s.m.path...), name)
	if len(modPath) > maxModuleDepth {
		return append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Modules nested too deeply",
			Detail:   fmt.Sprintf("Module %s is nested %d deep; the limit is %d. A module probably includes itself.", strings.Join(modPath, "."), len(modPath), maxModuleDepth),
			Subject:  a.Expr.Range().Ptr(),
		})
	}
	dir, pkgRoot, d := l.resolveSource(s.m, modPath, src, a)
	diags = append(diags, d...)
	if d.HasErrors() {
		return diags
	}
	for m := s.m; m != nil; m = m.parent {
		if m.dir == dir {
			return append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Module cycle",
				Detail:   fmt.Sprintf("Module %q sources %s, which is this module itself or one that includes it. Remove the module block, or point it at another directory.", name, src),
				Subject:  a.Expr.Range().Ptr(),
			})
		}
	}
	child, d := l.parseModule(dir, modPath)
	diags = append(diags, d...)
	if child == nil {
		diags[len(diags)-1].Subject = a.Expr.Range().Ptr()
		if strings.HasPrefix(dir, filepath.Join(l.root, filepath.FromSlash(ModulesDir))) {
			diags[len(diags)-1].Detail += " Run \"mcpform init\" to fetch the module again."
		}
		return diags
	}
	if child.noFiles {
		return append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Module has no configuration files",
			Detail:   fmt.Sprintf("%s has no %s or *%s files.", dir, ConfigFile, configSuffix),
			Subject:  a.Expr.Range().Ptr(),
		})
	}
	child.parent = s.m
	child.pkgRoot = pkgRoot
	if pkgRoot == "" {
		child.pkgRoot = s.m.pkgRoot
	}
	_, sd := l.checkSettings(child, false)
	diags = append(diags, sd...)
	if sd.HasErrors() {
		return diags
	}

	// Inputs: each must be a variable the module declares.
	vals := map[string]cty.Value{}
	given := map[string]bool{}
	for _, in := range sortedAttrs(inputs) {
		if reservedVarNames[in.Name] && in.Name != "source" {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Reserved argument name in module block",
				Detail:   fmt.Sprintf("%q is not supported on module blocks in mcpform. Pin a git module with ?ref=TAG in its source.", in.Name),
				Subject:  in.NameRange.Ptr(),
			})
			continue
		}
		v, ok := child.varsByName[in.Name]
		if !ok {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Unsupported argument",
				Detail:   fmt.Sprintf("Module %q does not declare a variable named %q, so it takes no such input.%s", name, in.Name, didYouMean(in.Name, varNames(child))),
				Subject:  in.NameRange.Ptr(),
			})
			continue
		}
		given[in.Name] = true
		val, d := s.eval(in.Expr)
		diags = append(diags, d...)
		if d.HasErrors() {
			vals[v.name] = cty.UnknownVal(v.typ)
			continue
		}
		rng := in.Expr.Range()
		val, d = l.finishVariable(v, val, valueSource{what: fmt.Sprintf("the module %q block", name), rng: &rng})
		diags = append(diags, d...)
		vals[v.name] = val
	}
	for _, v := range child.variables {
		if given[v.name] {
			continue
		}
		if v.def == cty.NilVal {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Missing required argument",
				Detail:   fmt.Sprintf("Module %q needs a value for its variable %q, which has no default. Add %s = … to the module block.", name, v.name, v.name),
				Subject:  b.DefRange.Ptr(),
			})
			vals[v.name] = cty.UnknownVal(v.typ)
			continue
		}
		val, d := l.finishVariable(v, v.def, valueSource{what: "its default", rng: &v.defRange})
		diags = append(diags, d...)
		vals[v.name] = val
	}
	return append(diags, l.evalModule(child, vals)...)
}

// resolveSource finds the directory of a module source. Git sources must
// have been fetched by mcpform init; Load never fetches.
func (l *loader) resolveSource(caller *module, modPath []string, src string, a *hcl.Attribute) (dir, pkgRoot string, diags hcl.Diagnostics) {
	source, err := parseSource(src)
	if err != nil {
		return "", "", hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Invalid module source",
			Detail:   fmt.Sprintf("%q: %v", src, err),
			Subject:  a.Expr.Range().Ptr(),
		}}
	}
	if !source.IsGit() {
		dir = cleanJoin(caller.dir, source.Local)
		if caller.pkgRoot != "" && !within(caller.pkgRoot, dir) {
			return "", "", hcl.Diagnostics{{
				Severity: hcl.DiagError,
				Summary:  "Invalid module source",
				Detail:   fmt.Sprintf("%q leaves the git module it is written in; a local source inside a fetched module must stay inside it.", src),
				Subject:  a.Expr.Range().Ptr(),
			}}
		}
		return dir, "", nil
	}
	key := strings.Join(modPath, ".")
	m := l.readManifest()
	diags = append(diags, l.mdiags...)
	l.mdiags = nil
	e := m.find(key)
	switch {
	case e == nil:
		return "", "", append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Module not installed",
			Detail:   fmt.Sprintf("Module %q comes from git (%s) and has not been fetched. Run \"mcpform init\" to fetch it into %s; after that, mcpform works offline.", key, src, ModulesDir),
			Subject:  a.Expr.Range().Ptr(),
		})
	case e.Source != src:
		return "", "", append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Module source has changed",
			Detail:   fmt.Sprintf("Module %q was fetched from %s, but the configuration now says %s. Run \"mcpform init\" to fetch the new source.", key, e.Source, src),
			Subject:  a.Expr.Range().Ptr(),
		})
	}
	pkgRoot = cleanJoin(l.root, e.Dir)
	if !within(filepath.Join(l.root, filepath.FromSlash(ModulesDir)), pkgRoot) {
		return "", "", append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid module manifest",
			Detail:   fmt.Sprintf("The manifest puts module %q outside %s. Run \"mcpform init\" to fetch the modules again.", key, ModulesDir),
			Subject:  a.Expr.Range().Ptr(),
		})
	}
	dir = pkgRoot
	if source.Subdir != "" {
		dir = cleanJoin(pkgRoot, source.Subdir)
	}
	return dir, pkgRoot, diags
}

// within reports whether path p is root or inside it.
func within(root, p string) bool {
	r, err := filepath.Rel(root, p)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
}

// sortEntries orders manifest entries by key, for a deterministic file.
func sortEntries(es []ManifestEntry) {
	sort.Slice(es, func(i, j int) bool { return es[i].Key < es[j].Key })
}
