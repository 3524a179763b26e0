package npm

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpform/mcpform/internal/escape"
)

// Hook is one lifecycle script npm runs when it installs a package: its
// name (preinstall, install, postinstall) and its command, as the
// registry's package.json has it (untrusted text: escape it to print it).
type Hook struct {
	Name    string `json:"hook"`
	Command string `json:"command"`
}

// PackageScripts are the install hooks of one package of a tree, by its
// lockfile path (node_modules/…), in the order npm runs them.
type PackageScripts struct {
	Path  string `json:"path"`
	Hooks []Hook `json:"hooks"`
}

// installHooks are the lifecycle scripts npm runs for a dependency it
// installs, in order.
var installHooks = []string{"preinstall", "install", "postinstall"}

// maxPackageJSON bounds a package.json ScriptsOf reads.
const maxPackageJSON = 4 << 20

// ScriptsOf reads what the install scripts of pin's tree are: for each
// package pin.InstallScripts lists, the hooks of its package.json in the
// installed tree under cacheRoot (Install put it there), and npm's own
// "node-gyp rebuild" for a package with a binding.gyp and neither a
// preinstall nor an install script. A package without any is left out.
func ScriptsOf(cacheRoot string, pin *Pin) ([]PackageScripts, error) {
	project := filepath.Join(EntryDir(cacheRoot, pin), treeDir)
	var out []PackageScripts
	for _, p := range pin.InstallScripts {
		if !strings.HasPrefix(p, "node_modules/") || slices.Contains(strings.Split(p, "/"), "..") {
			return nil, fmt.Errorf("install scripts: %s is not a package path of the tree", escape.String(p))
		}
		dir := filepath.Join(project, filepath.FromSlash(p))
		scripts, err := readScripts(filepath.Join(dir, PackageJSON))
		if err != nil {
			return nil, fmt.Errorf("install scripts of %s: %w", escape.String(p), err)
		}
		ps := PackageScripts{Path: p}
		for _, h := range installHooks {
			if c, ok := scripts[h]; ok {
				ps.Hooks = append(ps.Hooks, Hook{Name: h, Command: c})
			}
		}
		if _, pre := scripts["preinstall"]; !pre {
			if _, inst := scripts["install"]; !inst {
				if _, err := os.Lstat(filepath.Join(dir, "binding.gyp")); err == nil {
					ps.Hooks = append(ps.Hooks, Hook{Name: "install", Command: "node-gyp rebuild"})
				}
			}
		}
		if len(ps.Hooks) > 0 {
			out = append(out, ps)
		}
	}
	return out, nil
}

// readScripts is the "scripts" object of the package.json at p.
func readScripts(p string) (map[string]string, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPackageJSON+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxPackageJSON {
		return nil, fmt.Errorf("%s is larger than %d MiB", PackageJSON, maxPackageJSON>>20)
	}
	var doc struct {
		Scripts map[string]json.RawMessage `json:"scripts"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", PackageJSON, err)
	}
	out := map[string]string{}
	for k, v := range doc.Scripts {
		var s string
		if json.Unmarshal(v, &s) == nil {
			out[k] = s
		}
	}
	return out, nil
}
