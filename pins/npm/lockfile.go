package npm

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/internal/strictjson"
)

// The limits of what CheckLockfile accepts, against a lockfile (or the
// registry behind it) built to exhaust the machine: server-everything's
// tree is about 100 packages and 100 KiB of lockfile, the largest real
// MCP servers a few hundred packages.
const (
	// MaxLockfileBytes bounds the lockfile's size.
	MaxLockfileBytes = 16 << 20
	// MaxPackages bounds the packages it lists.
	MaxPackages = 5000
)

// Package is one entry of a checked lockfile.
type Package struct {
	// Path is its key in the lockfile ("node_modules/a/node_modules/b").
	Path string
	// Name is the package installed there (an alias's real name).
	Name, Version string
	// Resolved is its tarball's URL on the registry and Integrity its SRI
	// sha512; both are empty for a package bundled inside its parent's
	// tarball (covered by the parent's integrity).
	Resolved, Integrity string
	// Bundled says it came inside its parent's tarball.
	Bundled bool
	// InstallScript says the package has a preinstall, install or
	// postinstall script (npm's hasInstallScript), which mcpform does not
	// run.
	InstallScript bool
}

// Lockfile is a lockfile CheckLockfile accepted.
type Lockfile struct {
	// Root is the root's dependencies, name to version spec.
	Root map[string]string
	// Packages are every entry but the root, sorted by path.
	Packages []Package
}

// Find returns the entry installed at node_modules/name at the top.
func (l *Lockfile) Find(name string) (Package, bool) {
	for _, p := range l.Packages {
		if p.Path == "node_modules/"+name {
			return p, true
		}
	}
	return Package{}, false
}

// CheckTop refuses a lockfile whose root does not depend on exactly
// pkg@version alone, or whose top entry of pkg is another version or
// tarball than integrity: the lockfile is a tree of the pinned package,
// not of whatever a hand-edited file puts there.
func (l *Lockfile) CheckTop(pkg, version, integrity string) error {
	if len(l.Root) != 1 || l.Root[pkg] != version {
		return fmt.Errorf("the lockfile's root does not depend on %s@%s alone", escape.String(pkg), escape.String(version))
	}
	top, ok := l.Find(pkg)
	switch {
	case !ok:
		return fmt.Errorf("the lockfile has no node_modules/%s", escape.String(pkg))
	case top.Version != version || top.Integrity != integrity:
		return fmt.Errorf("the lockfile's %s is %s with integrity %s, not the pinned %s with %s", escape.String(pkg), escape.String(top.Version), escape.String(top.Integrity), escape.String(version), escape.String(integrity))
	}
	return nil
}

// InstallScripts are the paths of the packages with an install script.
func (l *Lockfile) InstallScripts() []string {
	var out []string
	for _, p := range l.Packages {
		if p.InstallScript {
			out = append(out, p.Path)
		}
	}
	return out
}

// rawEntry is what CheckLockfile reads of one packages entry; the fields
// it refuses are read only to refuse them.
type rawEntry struct {
	Name             string          `json:"name"`
	Version          string          `json:"version"`
	Resolved         *string         `json:"resolved"`
	Integrity        *string         `json:"integrity"`
	Link             bool            `json:"link"`
	InBundle         bool            `json:"inBundle"`
	HasInstallScript bool            `json:"hasInstallScript"`
	Dependencies     json.RawMessage `json:"dependencies"`
	Optional         json.RawMessage `json:"optionalDependencies"`
	Peer             json.RawMessage `json:"peerDependencies"`
	Dev              bool            `json:"dev"`
}

// specs are the dependency specs an entry declares, by the key it is
// installed under (dependencies, optional and peer dependencies).
func (e *rawEntry) specs() map[string]string {
	out := map[string]string{}
	for _, raw := range []json.RawMessage{e.Dependencies, e.Optional, e.Peer} {
		var m map[string]string
		if raw != nil && json.Unmarshal(raw, &m) == nil {
			for k, v := range m {
				out[k] = v
			}
		}
	}
	return out
}

// CheckLockfile reads an npm lockfile and accepts it only when it pins
// every package to the registry reg (an http(s) URL ending in "/"):
// lockfileVersion 3 (no v1 "dependencies" tree beside it), strict JSON
// within MaxLockfileBytes and MaxPackages, every path a chain of valid
// package names under node_modules (no "..", no workspace or link
// outside), no link entries, no dev entries, and every package not
// bundled in its parent with an exact version, a resolved tarball URL on
// reg's host below reg's path ending in .tgz (no file:, git:, other hosts,
// or http: when reg is https:), and an SRI sha512 integrity.
func CheckLockfile(data []byte, reg string) (*Lockfile, error) {
	if len(data) > MaxLockfileBytes {
		return nil, fmt.Errorf("the lockfile is larger than %d MiB", MaxLockfileBytes>>20)
	}
	if err := strictjson.Check(data); err != nil {
		return nil, fmt.Errorf("the lockfile is not strict JSON: %w", err)
	}
	regURL, err := url.Parse(reg)
	if err != nil || (regURL.Scheme != "https" && regURL.Scheme != "http") || regURL.Host == "" || !strings.HasSuffix(regURL.Path, "/") {
		return nil, fmt.Errorf("the registry %s is not an http(s) URL ending in /", escape.String(reg))
	}
	var doc struct {
		LockfileVersion *int                       `json:"lockfileVersion"`
		Dependencies    json.RawMessage            `json:"dependencies"`
		Packages        map[string]json.RawMessage `json:"packages"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("the lockfile: %w", err)
	}
	if doc.LockfileVersion == nil || *doc.LockfileVersion != 3 {
		return nil, fmt.Errorf("the lockfile is not lockfileVersion 3")
	}
	if doc.Dependencies != nil {
		return nil, fmt.Errorf("the lockfile has a v1 dependencies tree beside its packages")
	}
	if len(doc.Packages) > MaxPackages+1 {
		return nil, fmt.Errorf("the lockfile lists %d packages, more than the %d mcpform accepts", len(doc.Packages)-1, MaxPackages)
	}
	rootRaw, ok := doc.Packages[""]
	if !ok {
		return nil, fmt.Errorf("the lockfile has no root package")
	}
	var root struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(rootRaw, &root); err != nil {
		return nil, fmt.Errorf("the lockfile's root: %w", err)
	}
	l := &Lockfile{Root: root.Dependencies}
	// aliases are the installed keys some entry declares as an alias of
	// another package ("key": "npm:name@range"), by key, to the names.
	aliases := map[string][]string{}
	for _, raw := range doc.Packages {
		var e rawEntry
		if json.Unmarshal(raw, &e) != nil {
			continue // refused below, with its path
		}
		for key, spec := range e.specs() {
			if target, ok := strings.CutPrefix(spec, "npm:"); ok {
				if at := strings.LastIndex(target, "@"); at > 0 {
					aliases[key] = append(aliases[key], target[:at])
				}
			}
		}
	}
	for p, raw := range doc.Packages {
		if p == "" {
			continue
		}
		bad := func(format string, args ...any) error {
			return fmt.Errorf("the lockfile's %s: %s", escape.String(p), fmt.Sprintf(format, args...))
		}
		last, err := lockPath(p)
		if err != nil {
			return nil, bad("%v", err)
		}
		var e rawEntry
		if err := json.Unmarshal(raw, &e); err != nil {
			return nil, bad("%v", err)
		}
		if e.Link {
			return nil, bad("is a link to %s, not a registry package", escape.String(deref(e.Resolved)))
		}
		if e.Dev {
			return nil, bad("is a dev dependency (a server's tree is generated with --omit=dev)")
		}
		name := last
		if e.Name != "" && e.Name != last {
			// Another package installed under this key: only where a
			// package of the tree asks for it by an npm: alias, or a
			// lockfile could put any package where another is required.
			if err := ValidName(e.Name); err != nil {
				return nil, bad("%v", err)
			}
			if !slices.Contains(aliases[last], e.Name) {
				return nil, bad("installs %s under the name %s, and no package of the tree asks for it by an npm: alias", escape.String(e.Name), escape.String(last))
			}
			name = e.Name
		}
		pkg := Package{Path: p, Name: name, Version: e.Version, Bundled: e.InBundle, InstallScript: e.HasInstallScript}
		if _, err := ExactVersion(e.Version); err != nil {
			return nil, bad("version %s is not an exact version", escape.String(e.Version))
		}
		if e.InBundle {
			if e.Resolved != nil || e.Integrity != nil {
				// A bundled package is the parent tarball's bytes: a
				// resolved URL here would be fetched instead.
				return nil, bad("is bundled in its parent but names its own source")
			}
			l.Packages = append(l.Packages, pkg)
			continue
		}
		if e.Resolved == nil {
			return nil, bad("has no resolved URL (mcpform needs every tarball's registry URL)")
		}
		if err := checkResolved(*e.Resolved, regURL); err != nil {
			return nil, bad("%v", err)
		}
		if want := TarballURL(reg, name, e.Version); *e.Resolved != want {
			// The registry's own URL of that name and version: a
			// tarball of another package or release cannot stand in.
			return nil, bad("resolved %s is not the registry's tarball of %s@%s (%s)", escape.String(*e.Resolved), escape.String(name), escape.String(e.Version), escape.String(want))
		}
		if e.Integrity == nil {
			return nil, bad("has no integrity")
		}
		if err := checkIntegrity(*e.Integrity); err != nil {
			return nil, bad("%v", err)
		}
		pkg.Resolved, pkg.Integrity = *e.Resolved, *e.Integrity
		l.Packages = append(l.Packages, pkg)
	}
	slices.SortFunc(l.Packages, func(a, b Package) int { return strings.Compare(a.Path, b.Path) })
	return l, nil
}

// TarballURL is the registry reg's URL of the tarball of name at version,
// as npm's registries serve it: REG/NAME/-/BASE-VERSION.tgz, BASE the name
// without its scope.
func TarballURL(reg, name, version string) string {
	base := name
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		base = name[i+1:]
	}
	return reg + name + "/-/" + base + "-" + version + ".tgz"
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// lockPath checks a packages key: node_modules/NAME, repeated, each NAME
// valid (so no "..", no absolute path, nothing outside node_modules). It
// returns the last NAME.
func lockPath(p string) (string, error) {
	rest := p
	var last string
	for rest != "" {
		after, ok := strings.CutPrefix(rest, "node_modules/")
		if !ok {
			return "", fmt.Errorf("the path is not under node_modules (a workspace, link or traversal)")
		}
		var name, tail string
		n := 1
		if strings.HasPrefix(after, "@") {
			n = 2
		}
		parts := strings.SplitN(after, "/", n+1)
		if len(parts) < n {
			return "", fmt.Errorf("the path ends inside a scope")
		}
		name = strings.Join(parts[:n], "/")
		if len(parts) > n {
			tail = parts[n]
		}
		if err := ValidName(name); err != nil {
			return "", err
		}
		last, rest = name, tail
		if rest == "" && len(parts) > n {
			return "", fmt.Errorf("the path ends in /")
		}
	}
	return last, nil
}

// checkResolved accepts a tarball URL on the registry reg: its scheme and
// host, below its path, ending in .tgz, without credentials, query or
// fragment.
func checkResolved(resolved string, reg *url.URL) error {
	u, err := url.Parse(resolved)
	if err != nil {
		return fmt.Errorf("resolved %s is not a URL", escape.String(resolved))
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("resolved %s is not from a registry (%s: sources are refused)", escape.String(resolved), escape.String(u.Scheme))
	case u.Scheme != reg.Scheme || !strings.EqualFold(u.Host, reg.Host):
		return fmt.Errorf("resolved %s is not from the registry %s", escape.String(resolved), escape.String(reg.String()))
	case u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "":
		return fmt.Errorf("resolved %s has credentials, a query or a fragment", escape.String(resolved))
	case !strings.HasPrefix(u.EscapedPath(), reg.EscapedPath()) || strings.Contains(u.Path, "/../") || !strings.HasSuffix(u.Path, ".tgz") || !strings.Contains(u.Path, "/-/"):
		return fmt.Errorf("resolved %s is not a tarball of the registry %s", escape.String(resolved), escape.String(reg.String()))
	}
	return nil
}
