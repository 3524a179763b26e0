package lang

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// File naming convention: a configuration directory (the root, or a module)
// is mcp.hcl plus every *.mcp.hcl file in it, read in name order and merged.
// Other files, and subdirectories, are not read.
const (
	ConfigFile   = "mcp.hcl"
	configSuffix = ".mcp.hcl"
)

// isConfigFile reports whether a file name follows the convention.
func isConfigFile(name string) bool {
	return name == ConfigFile || (strings.HasSuffix(name, configSuffix) && len(name) > len(configSuffix) && !strings.HasPrefix(name, "."))
}

// fileSystem is what Load reads. osFS is the real one; tests and the fuzz
// target use an in-memory one.
type fileSystem interface {
	ReadFile(name string) ([]byte, error)
	ReadDir(name string) ([]fs.DirEntry, error)
}

type osFS struct{}

func (osFS) ReadFile(name string) ([]byte, error)       { return readLimited(name) }
func (osFS) ReadDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(name) }

// Load reads the configuration in dir (mcp.hcl and *.mcp.hcl), with its
// modules, and evaluates it ahead of time into plain values. Git modules
// are read from .mcpform/modules, where InstallModules put them: Load never
// touches the network and reads the environment only through
// opts.Getenv("MCPFORM_VAR_<name>").
func Load(dir string, opts Options) (*Config, hcl.Diagnostics) {
	return load(osFS{}, dir, opts)
}

func load(fsys fileSystem, dir string, opts Options) (*Config, hcl.Diagnostics) {
	dir = filepath.Clean(dir)
	l := &loader{fs: fsys, root: dir, opts: opts, files: map[string][]byte{}}
	cfg := &Config{Dir: dir, Lockfile: filepath.Join(dir, defaultLockfile), Files: l.files}

	root, diags := l.parseModule(dir, nil)
	if root == nil {
		return cfg, diags
	}
	if root.noFiles {
		return cfg, append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "No configuration files",
			Detail:   fmt.Sprintf("mcpform reads %s and *%s files in %s, and found none. Create %s there (mcp.hcl.example in the mcpform repository documents every block), or use -chdir to point at the directory that has one.", ConfigFile, configSuffix, displayDir(dir), ConfigFile),
		})
	}
	// A configuration written for another mcpform is best reported alone:
	// its other errors are likely consequences of the version mismatch.
	lockfile, vdiags := l.checkSettings(root, true)
	if vdiags.HasErrors() {
		return cfg, append(diags, vdiags...)
	}
	diags = append(diags, vdiags...)
	if lockfile != "" {
		if filepath.IsAbs(lockfile) {
			cfg.Lockfile = filepath.Clean(lockfile)
		} else {
			cfg.Lockfile = filepath.Join(dir, filepath.FromSlash(lockfile))
		}
	}

	vals, vdiags := l.rootVariables(root)
	diags = append(diags, vdiags...)
	diags = append(diags, l.evalModule(root, vals)...)

	sort.Slice(l.servers, func(i, j int) bool { return l.servers[i].Name < l.servers[j].Name })
	// Names cannot collide by construction (labels are identifiers without
	// dots, module prefixes are unique); the lock depends on it, so check.
	for i := 1; i < len(l.servers); i++ {
		if a, b := l.servers[i-1], l.servers[i]; a.Name == b.Name {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Duplicate server name",
				Detail:   fmt.Sprintf("%s and %s would both be %q in mcp.lock. Rename one of them.", a.Addr, b.Addr, a.Name),
				Subject:  b.DeclRange.Ptr(),
			})
		}
	}
	cfg.Servers = l.servers
	cfg.Judges = l.judges
	return cfg, sanitize(diags)
}

// loader holds the state of one Load.
type loader struct {
	fs       fileSystem
	root     string
	opts     Options
	files    map[string][]byte
	manifest *manifest
	mdiags   hcl.Diagnostics // from reading the manifest, reported once
	servers  []*Server
	judges   []Judge // the root mcpform block's
}

// module is one parsed configuration directory, before evaluation.
type module struct {
	path    []string // module call names from the root; nil for the root
	dir     string   // directory as the file system sees it
	relDir  string   // path.module: slash-separated, relative to the root
	pkgRoot string   // for a git module, its fetched directory; "" otherwise
	parent  *module
	noFiles bool

	settings   []*hcl.Block // mcpform blocks
	variables  []*variable
	varsByName map[string]*variable
	locals     []*hcl.Attribute
	servers    []*hcl.Block
	calls      []*hcl.Block // module blocks
}

var fileSchema = &hcl.BodySchema{
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "mcpform"},
		{Type: "variable", LabelNames: []string{"name"}},
		{Type: "locals"},
		{Type: "server", LabelNames: []string{"name"}},
		{Type: "module", LabelNames: []string{"name"}},
	},
}

// parseModule reads and parses every configuration file of dir and sorts
// its top-level blocks. It evaluates nothing.
func (l *loader) parseModule(dir string, modPath []string) (*module, hcl.Diagnostics) {
	entries, err := l.fs.ReadDir(dir)
	if err != nil {
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Cannot read configuration directory",
			Detail:   fmt.Sprintf("Reading %s: %v.", displayDir(dir), unwrapPathError(err)),
		}}
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && isConfigFile(e.Name()) {
			names = append(names, e.Name())
		}
	}
	// mcp.hcl first, then the others in name order.
	sort.Slice(names, func(i, j int) bool {
		if (names[i] == ConfigFile) != (names[j] == ConfigFile) {
			return names[i] == ConfigFile
		}
		return names[i] < names[j]
	})

	m := &module{path: modPath, dir: dir, relDir: l.rel(dir), varsByName: map[string]*variable{}, noFiles: len(names) == 0}
	var diags hcl.Diagnostics
	declared := map[string]*hcl.Block{} // "server.x", "module.x", "variable.x"
	localDecl := map[string]*hcl.Attribute{}
	for _, name := range names {
		filename := filepath.Join(dir, name)
		src, err := l.fs.ReadFile(filename)
		if err != nil {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Cannot read configuration file",
				Detail:   fmt.Sprintf("Reading %s: %v.", filename, unwrapPathError(err)),
			})
			continue
		}
		l.files[filename] = src
		file, pdiags := parseConfig(src, filename)
		diags = append(diags, pdiags...)
		if file == nil || pdiags.HasErrors() {
			continue
		}
		content, cdiags := file.Body.Content(fileSchema)
		diags = append(diags, cdiags...)
		for _, b := range content.Blocks {
			switch b.Type {
			case "mcpform":
				m.settings = append(m.settings, b)
				continue
			case "locals":
				attrs, adiags := b.Body.JustAttributes()
				diags = append(diags, adiags...)
				for _, a := range sortedAttrs(attrs) {
					if prev, dup := localDecl[a.Name]; dup {
						diags = append(diags, &hcl.Diagnostic{
							Severity: hcl.DiagError,
							Summary:  "Duplicate local value definition",
							Detail:   fmt.Sprintf("A local value named %q was already defined at %s. Local value names must be unique within a module; rename or remove one.", a.Name, rangeString(prev.NameRange)),
							Subject:  a.NameRange.Ptr(),
						})
						continue
					}
					if !hclsyntax.ValidIdentifier(a.Name) {
						continue // the parser already refused it
					}
					localDecl[a.Name] = a
					m.locals = append(m.locals, a)
				}
				continue
			}
			name := b.Labels[0]
			if d := checkName(b.Type, name, b.LabelRanges[0]); d != nil {
				diags = append(diags, d)
				continue
			}
			key := b.Type + "." + name
			if prev, dup := declared[key]; dup {
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  fmt.Sprintf("Duplicate %s %q", b.Type, name),
					Detail:   fmt.Sprintf("A %s named %q was already declared at %s. Names must be unique within a module (across all of its files); rename or remove one.", b.Type, name, rangeString(prev.DefRange)),
					Subject:  b.LabelRanges[0].Ptr(),
					Context:  b.DefRange.Ptr(),
				})
				continue
			}
			declared[key] = b
			switch b.Type {
			case "variable":
				v, vdiags := decodeVariable(b)
				diags = append(diags, vdiags...)
				if v != nil {
					m.variables = append(m.variables, v)
					m.varsByName[v.name] = v
				}
			case "server":
				m.servers = append(m.servers, b)
			case "module":
				m.calls = append(m.calls, b)
			}
		}
	}
	return m, diags
}

// checkName refuses block labels that would make an ambiguous address or
// lock name: they must be identifiers (no dots).
func checkName(kind, name string, rng hcl.Range) *hcl.Diagnostic {
	if hclsyntax.ValidIdentifier(name) {
		if kind == "variable" && reservedVarNames[name] {
			return &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid variable name",
				Detail:   fmt.Sprintf("The name %q is reserved: it is an argument of the module block. Choose another name.", name),
				Subject:  rng.Ptr(),
			}
		}
		return nil
	}
	what := "letters, digits, underscores and hyphens, starting with a letter or underscore"
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  fmt.Sprintf("Invalid %s name", kind),
		Detail:   fmt.Sprintf("A %s name must be an identifier: %s. %q is not; module server names in the lock join names with dots, so a name cannot contain one.", kind, what, name),
		Subject:  rng.Ptr(),
	}
}

// reservedVarNames are module block arguments that are not inputs.
var reservedVarNames = map[string]bool{"source": true, "version": true, "count": true, "for_each": true, "depends_on": true, "providers": true}

// rel returns dir relative to the root, slash-separated, for path.module.
func (l *loader) rel(dir string) string {
	r, err := filepath.Rel(l.root, dir)
	if err != nil {
		return filepath.ToSlash(dir)
	}
	return filepath.ToSlash(r)
}

// checkSettings validates the mcpform blocks of a module and returns the
// lockfile setting ("" when not set). Settings may only use literals.
func (l *loader) checkSettings(m *module, isRoot bool) (string, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	var lockfile string
	var judgeBlocks []*hcl.Block
	for _, b := range m.settings {
		content, cdiags := b.Body.Content(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "required_version"}, {Name: "lockfile"}},
			Blocks: []hcl.BlockHeaderSchema{{Type: "judge", LabelNames: []string{"name"}}}})
		diags = append(diags, cdiags...)
		judgeBlocks = append(judgeBlocks, content.Blocks...)
		if a, ok := content.Attributes["required_version"]; ok {
			diags = append(diags, l.checkRequiredVersion(a)...)
		}
		if a, ok := content.Attributes["lockfile"]; ok {
			if !isRoot {
				diags = append(diags, errorAt(a.Range, "Lockfile set in a module",
					"Only the root configuration chooses where mcp.lock lives. Remove lockfile from this module's mcpform block."))
				continue
			}
			if lockfile != "" {
				diags = append(diags, errorAt(a.Range, "Duplicate lockfile setting",
					"lockfile is already set in another mcpform block. Keep one."))
				continue
			}
			v, ok, d := literalString(a, "lockfile")
			diags = append(diags, d...)
			if !ok {
				continue
			}
			if v == "" || strings.ContainsRune(v, 0) {
				diags = append(diags, errorAt(a.Expr.Range(), "Invalid lockfile",
					"lockfile is a file path, relative to this directory, for example \"mcp.lock\"."))
				continue
			}
			lockfile = v
		}
	}
	judges, jdiags := checkJudges(judgeBlocks, isRoot)
	diags = append(diags, jdiags...)
	if isRoot {
		l.judges = judges
	}
	return lockfile, diags
}

// literalString evaluates an attribute that may not refer to anything.
func literalString(a *hcl.Attribute, what string) (string, bool, hcl.Diagnostics) {
	v, diags := a.Expr.Value(nil)
	if diags.HasErrors() {
		return "", false, diags
	}
	if v.IsNull() || !v.Type().Equals(cty.String) {
		return "", false, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Incorrect attribute value type",
			Detail:   fmt.Sprintf("%s must be a string literal.", what),
			Subject:  a.Expr.Range().Ptr(),
		}}
	}
	return v.AsString(), true, nil
}

func sortedAttrs(attrs hcl.Attributes) []*hcl.Attribute {
	out := make([]*hcl.Attribute, 0, len(attrs))
	for _, a := range attrs {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return posLess(out[i].Range, out[j].Range) })
	return out
}

func posLess(a, b hcl.Range) bool {
	if a.Filename != b.Filename {
		return a.Filename < b.Filename
	}
	return a.Start.Byte < b.Start.Byte
}

func rangeString(r hcl.Range) string {
	return fmt.Sprintf("%s:%d,%d", r.Filename, r.Start.Line, r.Start.Column)
}

func displayDir(dir string) string {
	if dir == "." {
		return "the current directory"
	}
	return dir
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// cleanJoin joins slash-separated rel onto dir.
func cleanJoin(dir, rel string) string {
	return filepath.Join(dir, filepath.FromSlash(path.Clean(rel)))
}
