package npm

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const reg = "https://registry.npmjs.org/"

// editLock decodes a real lockfile, lets edit change it, and encodes it.
func editLock(t *testing.T, raw []byte, edit func(doc map[string]any, pkgs map[string]any, some map[string]any)) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	pkgs := doc["packages"].(map[string]any)
	var some map[string]any
	for p, e := range pkgs {
		if p != "" {
			some = e.(map[string]any)
			break
		}
	}
	edit(doc, pkgs, some)
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCheckLockfileRefuses edits copies of server-everything's real
// lockfile: each edit that lets something other than the registry's
// sha512-checked tarballs in is refused, naming why.
func TestCheckLockfileRefuses(t *testing.T) {
	p := everything.get(t, "npx", "-y", "@modelcontextprotocol/server-everything@2026.8.31", "stdio")
	raw := readLock(t, p)
	lf, err := CheckLockfile(raw, p.pin.Registry)
	if err != nil {
		t.Fatal(err)
	}
	if len(lf.Packages) != p.pin.Packages {
		t.Fatalf("%d packages, pin says %d", len(lf.Packages), p.pin.Packages)
	}
	set := func(k string, v any) func(map[string]any, map[string]any, map[string]any) {
		return func(_, _ map[string]any, e map[string]any) { e[k] = v }
	}
	cases := []struct {
		name string
		edit func(doc, pkgs, some map[string]any)
		want string
	}{
		{"file dependency", set("resolved", "file:../evil"), "file: sources are refused"},
		{"git dependency", set("resolved", "git+ssh://git@github.com/a/b.git#0123456789abcdef"), "git+ssh: sources are refused"},
		{"other host", set("resolved", "https://evil.example/a/-/a-1.0.0.tgz"), "not from the registry"},
		{"plain http", set("resolved", "http://registry.npmjs.org/a/-/a-1.0.0.tgz"), "not from the registry"},
		{"not a tarball", set("resolved", "https://registry.npmjs.org/a"), "not a tarball"},
		{"query", set("resolved", "https://registry.npmjs.org/a/-/a-1.0.0.tgz?x=1"), "query"},
		{"traversal in URL", set("resolved", "https://registry.npmjs.org/a/-/../../../x.tgz"), "not a tarball"},
		{"no resolved", func(_, _, e map[string]any) { delete(e, "resolved") }, "no resolved URL"},
		{"sha1 integrity", set("integrity", "sha1-8pL3aT6zM9C1ZxwdZ1lXb5cX0r4="), "not sha512"},
		{"unknown algorithm", set("integrity", "blake3-8pL3aT6zM9C1ZxwdZ1lXb5cX0r4="), "not sha512"},
		{"no integrity", func(_, _, e map[string]any) { delete(e, "integrity") }, "no integrity"},
		{"link", set("link", true), "is a link"},
		{"dev", set("dev", true), "dev dependency"},
		{"range version", set("version", "^1.0.0"), "not an exact version"},
		{"bundled with a source", set("inBundle", true), "bundled in its parent but names its own source"},
		{"alias to a bad name", set("name", "../../x"), "not a valid npm package name"},
		{"traversal key", func(_, pkgs, _ map[string]any) { pkgs["node_modules/../../etc"] = map[string]any{"version": "1.0.0"} }, "not a valid npm package name"},
		{"workspace key", func(_, pkgs, _ map[string]any) { pkgs["packages/x"] = map[string]any{"version": "1.0.0"} }, "not under node_modules"},
		{"absolute key", func(_, pkgs, _ map[string]any) { pkgs["/etc/x"] = map[string]any{"version": "1.0.0"} }, "not under node_modules"},
		{"lockfile v2", func(doc, _, _ map[string]any) { doc["lockfileVersion"] = 2 }, "not lockfileVersion 3"},
		{"v1 tree", func(doc, _, _ map[string]any) { doc["dependencies"] = map[string]any{} }, "v1 dependencies"},
		{"no root", func(_, pkgs, _ map[string]any) { delete(pkgs, "") }, "no root"},
		{"package bomb", func(_, pkgs, _ map[string]any) {
			for i := range MaxPackages + 1 {
				pkgs[fmt.Sprintf("node_modules/p%d", i)] = map[string]any{}
			}
		}, "more than the 5000"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := editLock(t, raw, c.edit)
			_, err := CheckLockfile(data, p.pin.Registry)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("CheckLockfile = %v; want %q", err, c.want)
			}
		})
	}
	// A package installed under another's name, and a tarball of another
	// package or release: the substitutions a hand-edited lockfile would
	// use to put other code where the tree requires a package.
	someIntegrity := ""
	for _, q := range lf.Packages {
		if q.Integrity != "" {
			someIntegrity = q.Integrity
			break
		}
	}
	substitutions := []struct {
		name string
		edit func(doc, pkgs, some map[string]any)
		want string
	}{
		{"undeclared alias", func(_, pkgs, _ map[string]any) {
			pkgs["node_modules/ms"] = map[string]any{"name": "debug", "version": "2.1.3", "resolved": TarballURL(reg, "debug", "2.1.3"), "integrity": someIntegrity}
		}, "installs debug under the name ms, and no package of the tree asks for it by an npm: alias"},
		{"another package's tarball", func(_, _, e map[string]any) { e["resolved"] = TarballURL(reg, "debug", "2.1.3") }, "is not the registry's tarball of"},
		{"another release's tarball", func(_, _, e map[string]any) {
			e["resolved"] = strings.Replace(e["resolved"].(string), ".tgz", "0.tgz", 1)
		}, "is not the registry's tarball of"},
	}
	for _, c := range substitutions {
		t.Run(c.name, func(t *testing.T) {
			if _, err := CheckLockfile(editLock(t, raw, c.edit), p.pin.Registry); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("CheckLockfile = %v; want %q", err, c.want)
			}
		})
	}
	t.Run("declared alias", func(t *testing.T) {
		data := editLock(t, raw, func(_, pkgs, _ map[string]any) {
			pkgs["node_modules/ms-alias"] = map[string]any{"name": "ms", "version": "2.1.3", "resolved": TarballURL(reg, "ms", "2.1.3"), "integrity": someIntegrity}
			root := pkgs[""].(map[string]any)
			deps := root["dependencies"].(map[string]any)
			deps["ms-alias"] = "npm:ms@^2.1.0"
		})
		if _, err := CheckLockfile(data, p.pin.Registry); err != nil {
			t.Errorf("an alias the tree declares (npm:ms@^2.1.0) is refused: %v", err)
		}
	})
	t.Run("top package", func(t *testing.T) {
		if err := lf.CheckTop(p.pin.Package, p.pin.Version, p.pin.Integrity); err != nil {
			t.Errorf("CheckTop of the pinned tree: %v", err)
		}
		if err := lf.CheckTop(p.pin.Package, "2026.1.1", p.pin.Integrity); err == nil || !strings.Contains(err.Error(), "does not depend on") {
			t.Errorf("CheckTop with another version: %v", err)
		}
		if err := lf.CheckTop(p.pin.Package, p.pin.Version, someIntegrity); someIntegrity != p.pin.Integrity && (err == nil || !strings.Contains(err.Error(), "not the pinned")) {
			t.Errorf("CheckTop with another integrity: %v", err)
		}
	})
	t.Run("duplicate key", func(t *testing.T) {
		data := strings.Replace(string(raw), `"lockfileVersion":3`, `"lockfileVersion":3,"lockfileVersion":3`, 1)
		if _, err := CheckLockfile([]byte(data), p.pin.Registry); err == nil || !strings.Contains(err.Error(), "strict JSON") {
			t.Errorf("CheckLockfile = %v", err)
		}
	})
	t.Run("size bomb", func(t *testing.T) {
		data := make([]byte, MaxLockfileBytes+1)
		if _, err := CheckLockfile(data, p.pin.Registry); err == nil || !strings.Contains(err.Error(), "larger than") {
			t.Errorf("CheckLockfile = %v", err)
		}
		f := filepath.Join(t.TempDir(), LockfileName)
		os.WriteFile(f, data, 0o644)
		if _, err := readBounded(f); err == nil {
			t.Error("readBounded read a lockfile past the limit")
		}
	})
}

// TestWalkTreeLimits: a tree past the file count or size limit, a link
// out of it, or a special file is refused before a manifest is written.
func TestWalkTreeLimits(t *testing.T) {
	mk := func(t *testing.T, files int) string {
		dir := t.TempDir()
		for i := range files {
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d", i)), []byte("0123456789"), 0o644)
		}
		return dir
	}
	if m, _, err := walkTree(mk(t, 5)); err != nil || len(m.Files) != 5 {
		t.Fatalf("walkTree = %v, %v", m, err)
	}
	defer func(f, b int64) { maxFiles, maxTreeBytes = f, b }(maxFiles, maxTreeBytes)
	maxFiles = 4
	if _, _, err := walkTree(mk(t, 5)); err == nil || !strings.Contains(err.Error(), "more than 4 files") {
		t.Errorf("file bomb: %v", err)
	}
	maxFiles, maxTreeBytes = MaxFiles, 45
	if _, _, err := walkTree(mk(t, 5)); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("size bomb: %v", err)
	}
	maxTreeBytes = MaxTreeBytes
	for _, target := range []string{"/etc/passwd", "../../outside", "b/../../../x"} {
		dir := mk(t, 1)
		os.MkdirAll(filepath.Join(dir, "a"), 0o755)
		os.Symlink(target, filepath.Join(dir, "a", "link"))
		if _, _, err := walkTree(dir); err == nil || !strings.Contains(err.Error(), "points out of it") {
			t.Errorf("link to %s: %v", target, err)
		}
	}
	dir := mk(t, 1)
	os.MkdirAll(filepath.Join(dir, "a"), 0o755)
	if err := os.Symlink("../f0", filepath.Join(dir, "a", "ok")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := walkTree(dir); err != nil {
		t.Errorf("link inside: %v", err)
	}
}

// FuzzCheckLockfile: whatever the bytes, CheckLockfile returns without
// panicking, and what it accepts names only registry tarballs with
// sha512 integrity under valid node_modules paths.
func FuzzCheckLockfile(f *testing.F) {
	f.Add([]byte(`{"lockfileVersion":3,"packages":{"":{"dependencies":{"a":"1.0.0"}},"node_modules/a":{"version":"1.0.0","resolved":"https://registry.npmjs.org/a/-/a-1.0.0.tgz","integrity":"sha512-5U3OZh8Xq0Li4nA26l6uNvV9/1suMDuWSn+NjLZIhzinhMY6N3A4DCrxVecBGPf2PsNFKTEv5krxGPRwzxc7jQ=="}}}`))
	f.Add([]byte(`{"lockfileVersion":3,"packages":{"":{},"node_modules/@s/a/node_modules/b":{"version":"1.0.0","inBundle":true}}}`))
	f.Add([]byte(`{"lockfileVersion":3,"packages":{"":{},"node_modules/a":{"version":"1.0.0","resolved":"file:../a","integrity":"sha1-x"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		lf, err := CheckLockfile(data, reg)
		if err != nil {
			return
		}
		for _, p := range lf.Packages {
			if _, err := lockPath(p.Path); err != nil || strings.Contains(p.Path, "..") {
				t.Fatalf("accepted path %q", p.Path)
			}
			if !p.Bundled && (!strings.HasPrefix(p.Resolved, reg) || checkIntegrity(p.Integrity) != nil) {
				t.Fatalf("accepted %+v", p)
			}
		}
	})
}

// TestOuterModules: a node_modules in a cache entry's directory or above
// it is found (node would resolve a package the tree lacks there), as a
// link to one is; none is nothing.
func TestOuterModules(t *testing.T) {
	root := t.TempDir()
	entry := filepath.Join(root, "cache", "mcpform", "npm", "abc")
	if err := os.MkdirAll(filepath.Join(entry, treeDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if p, ok := outerModules(entry); ok && strings.HasPrefix(p, root) {
		t.Fatalf("outerModules of a clean tree = %s", p)
	}
	planted := filepath.Join(root, "cache", "node_modules")
	if err := os.Symlink(t.TempDir(), planted); err != nil {
		t.Fatal(err)
	}
	if p, ok := outerModules(entry); !ok || p != planted {
		t.Errorf("outerModules = %q, %v; want %s", p, ok, planted)
	}
	if err := CheckEnv([]string{"PATH", "NODE_OPTIONS"}); err == nil || !strings.Contains(err.Error(), "remove NODE_OPTIONS") {
		t.Errorf("CheckEnv(NODE_OPTIONS) = %v", err)
	}
	if err := CheckEnv([]string{"PATH", "HOME", "NODE_ENV"}); err != nil {
		t.Errorf("CheckEnv of harmless names = %v", err)
	}
}

// TestGlobalModules: node's global folders under the server's HOME and
// beside the node binary are found when they exist, and a start is refused
// for one only when the server gets that HOME.
func TestGlobalModules(t *testing.T) {
	home, prefix := t.TempDir(), t.TempDir()
	node := filepath.Join(prefix, "bin", "node")
	if d, ok := GlobalModules(home, node); ok {
		t.Fatalf("GlobalModules of clean folders = %s", d)
	}
	if err := os.MkdirAll(filepath.Join(prefix, "lib", "node"), 0o755); err != nil {
		t.Fatal(err)
	}
	if d, ok := GlobalModules(home, node); !ok || d != filepath.Join(prefix, "lib", "node") {
		t.Errorf("GlobalModules with PREFIX/lib/node = %q, %v", d, ok)
	}
	planted := filepath.Join(home, ".node_modules")
	if err := os.Mkdir(planted, 0o755); err != nil {
		t.Fatal(err)
	}
	if d, ok := GlobalModules(home, ""); !ok || d != planted {
		t.Errorf("GlobalModules with ~/.node_modules = %q, %v", d, ok)
	}
	getenv := func(k string) string { return map[string]string{"HOME": home}[k] }
	if err := CheckGlobals([]string{"PATH", "HOME"}, getenv); err == nil || !strings.Contains(err.Error(), ".node_modules") {
		t.Errorf("CheckGlobals with HOME passed = %v", err)
	}
	if err := CheckGlobals([]string{"PATH"}, getenv); err != nil && strings.Contains(err.Error(), home) {
		t.Errorf("CheckGlobals without HOME looked under HOME: %v", err)
	}
}
