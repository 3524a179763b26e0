package pypi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpform/mcpform/internal/pypitest"
)

// resolved resolves mcpform-hello-mcp==1.0.0 from a find-links directory
// of real wheels with the real pip, and returns the pin, the directory of
// its requirements file and the wheels' directory.
func resolved(t *testing.T) (*Pin, string, string) {
	t.Helper()
	pypitest.Need(t)
	wheels := pypitest.Wheels(t, filepath.Join(t.TempDir(), "wheels"), "1.0.0")
	pypitest.SetEnv(t, wheels)
	spec, ok, err := Parse([]string{"uvx", "mcpform-hello-mcp==1.0.0"})
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	dir := t.TempDir()
	start := time.Now()
	pin, err := Resolve(context.Background(), spec, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Resolve: %v", time.Since(start))
	return pin, dir, wheels
}

func fileSHA(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// serve starts argv (a pinned server) and asks it for tools/call greet,
// from a working directory that holds a module shadowing its dependency
// (which -I keeps off sys.path).
func serve(t *testing.T, argv []string, env ...string) string {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = t.TempDir()
	shadow := "def greeting(name):\n    return 'shadowed'\n"
	os.WriteFile(filepath.Join(cmd.Dir, "mcpform_hello_dep.py"), []byte(shadow), 0o644)
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{"name":"pin"}}}
`)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the pinned server: %v\n%s", err, stderr.String())
	}
	return string(out)
}

func TestResolveInstallVerify(t *testing.T) {
	pin, dir, wheels := resolved(t)
	data, err := os.ReadFile(filepath.Join(dir, RequirementsName))
	if err != nil {
		t.Fatal(err)
	}
	dep := fileSHA(t, filepath.Join(wheels, pypitest.WheelFile(pypitest.Dep, "1.0.0")))
	top := fileSHA(t, filepath.Join(wheels, pypitest.WheelFile(pypitest.Server, "1.0.0")))
	want := "mcpform-hello-dep==1.0.0 --hash=sha256:" + dep + "\nmcpform-hello-mcp==1.0.0 --hash=sha256:" + top + "\n"
	if string(data) != want {
		t.Fatalf("requirements.txt =\n%s\nwant\n%s", data, want)
	}
	sum := sha256.Sum256(data)
	if pin.Requirements != hex.EncodeToString(sum[:]) || pin.SHA256 != top || pin.Package != pypitest.Server || pin.Version != "1.0.0" ||
		pin.Wheel != pypitest.WheelFile(pypitest.Server, "1.0.0") || pin.Index != "" || len(pin.Tree) != 2 || pin.Script != "" {
		t.Fatalf("pin = %+v", pin)
	}

	cache := filepath.Join(t.TempDir(), "cache")
	start := time.Now()
	got, err := Install(context.Background(), pin, dir, cache, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Install: %v", time.Since(start))
	if got.Script != pypitest.Script || got.EntryPoint != pypitest.EntryPoint {
		t.Fatalf("Install picked %q = %q", got.Script, got.EntryPoint)
	}
	var files, bytes int64
	filepath.Walk(EntryDir(cache, pin), func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			files++
			bytes += fi.Size()
		}
		return nil
	})
	t.Logf("cache entry: %d files, %d bytes", files, bytes)
	start = time.Now()
	if err := Verify(cache, got); err != nil {
		t.Fatal(err)
	}
	t.Logf("Verify (first, hashing): %v", time.Since(start))
	start = time.Now()
	if err := Verify(cache, got); err != nil {
		t.Fatal(err)
	}
	t.Logf("Verify (stat keys): %v", time.Since(start))

	// The pinned server runs from the cache with no index at all, and
	// its dependency answers.
	argv, err := Argv(cache, got)
	if err != nil {
		t.Fatal(err)
	}
	out := serve(t, argv, "PIP_NO_INDEX=", "PIP_FIND_LINKS=", "PIP_INDEX_URL=http://10.255.255.1/simple", "PYTHONPATH=.")
	if !strings.Contains(out, `"text":"Hello, pin!"`) || !strings.Contains(out, `"version":"1.0.0"`) {
		t.Fatalf("the server answered %s", out)
	}

	// A second Install is a check, not an install: with the wheels gone.
	os.RemoveAll(wheels)
	if again, err := Install(context.Background(), got, dir, cache, Options{}); err != nil || again.EntryPoint != got.EntryPoint {
		t.Fatalf("a second Install = %v, %v", again, err)
	}

	// Another script than the lock records: refused.
	other := *got
	other.Script = "other"
	if err := Verify(cache, &other); err == nil || !strings.Contains(err.Error(), "console script") {
		t.Errorf("Verify with another script: %v", err)
	}
}

func TestVerifyRefusesATamperedTree(t *testing.T) {
	pin, dir, _ := resolved(t)
	cache := t.TempDir()
	got, err := Install(context.Background(), pin, dir, cache, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(cache, got); err != nil {
		t.Fatal(err)
	}
	venv := filepath.Join(EntryDir(cache, pin), treeDir)
	mods, _ := filepath.Glob(filepath.Join(venv, "lib", "python*", "site-packages", "mcpform_hello_dep", "__init__.py"))
	if len(mods) != 1 {
		t.Fatalf("no installed module: %v", mods)
	}
	mod := mods[0]
	orig, _ := os.ReadFile(mod)
	// Same size, other bytes: only the hash can tell.
	tampered := bytes.Replace(orig, []byte("Hello"), []byte("Pwned"), 1)
	os.Chmod(mod, 0o644)
	if err := os.WriteFile(mod, tampered, 0o644); err != nil {
		t.Fatal(err)
	}
	err = Verify(cache, got)
	var te *TreeError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "mcpform_hello_dep/__init__.py changed") || !strings.Contains(err.Error(), "nothing was started") {
		t.Fatalf("Verify after a tampered file: %v", err)
	}
	// An entry that is damaged is not silently reinstalled.
	if _, err := Install(context.Background(), got, dir, cache, Options{}); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("Install over a tampered entry: %v", err)
	}
	os.WriteFile(mod, orig, 0o444)
	if err := Verify(cache, got); err != nil {
		t.Fatalf("Verify with the file restored: %v", err)
	}
	// A module added beside the pinned ones (sitecustomize, a .pth).
	sp := filepath.Dir(filepath.Dir(mod))
	if err := os.WriteFile(filepath.Join(sp, "evil.pth"), []byte("import os\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Verify(cache, got); err == nil || !strings.Contains(err.Error(), "gained or lost entries: +evil.pth") {
		t.Fatalf("Verify after an added .pth: %v", err)
	}
	os.Remove(filepath.Join(sp, "evil.pth"))
	// The interpreter link pointed elsewhere.
	link := filepath.Join(venv, "bin", "python3")
	os.Remove(link)
	os.Symlink("/bin/sh", link)
	if err := Verify(cache, got); err == nil || !strings.Contains(err.Error(), "points to /bin/sh") {
		t.Fatalf("Verify after a moved interpreter link: %v", err)
	}
}

func TestInstallRefusesAChangedRequirements(t *testing.T) {
	pin, dir, _ := resolved(t)
	p := filepath.Join(dir, RequirementsName)
	data, _ := os.ReadFile(p)
	// Another hash in the stored file: its digest is not the lock's.
	lines := strings.Split(string(data), "\n")
	h := lines[0][len(lines[0])-64:]
	changed := bytes.Replace(data, []byte(h), []byte(strings.Repeat("0", 64)), 1)
	os.WriteFile(p, changed, 0o644)
	cache := t.TempDir()
	if _, err := Install(context.Background(), pin, dir, cache, Options{}); err == nil || !strings.Contains(err.Error(), "changed since it was locked") {
		t.Fatalf("Install from a changed file: %v", err)
	}
	// The same change with a lock to match: pip refuses the wheel, whose
	// sha256 is not the pinned one, and no entry is left.
	forged := *pin
	s := sha256.Sum256(changed)
	forged.Requirements = hex.EncodeToString(s[:])
	_, err := Install(context.Background(), &forged, dir, cache, Options{})
	if err == nil || !strings.Contains(err.Error(), "HASHES") {
		t.Fatalf("Install of a wrong hash: %v", err)
	}
	if _, serr := os.Lstat(EntryDir(cache, &forged)); !errors.Is(serr, os.ErrNotExist) {
		t.Fatalf("a failed install left %s (%v)", EntryDir(cache, &forged), serr)
	}
}

func TestPinnedTreeIgnoresNewReleases(t *testing.T) {
	pin, dir, wheels := resolved(t)
	// A newer dependency (the server wants >=1.0), and the pinned version
	// of the dependency replaced by other bytes: a fresh resolve sees
	// both, the pinned tree neither.
	if err := pypitest.DepWheel(wheels, "1.1.0", ""); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	if _, err := Install(context.Background(), pin, dir, cache, Options{}); err != nil {
		t.Fatal(err)
	}
	infos, _ := filepath.Glob(filepath.Join(EntryDir(cache, pin), treeDir, "lib", "python*", "site-packages", "mcpform_hello_dep-*.dist-info"))
	if len(infos) != 1 || !strings.HasSuffix(infos[0], "mcpform_hello_dep-1.0.0.dist-info") {
		t.Fatalf("installed %v, want the pinned 1.0.0", infos)
	}
	spec, _, _ := Parse([]string{"uvx", "mcpform-hello-mcp==1.0.0"})
	fresh, err := Resolve(context.Background(), spec, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if fresh.Requirements == pin.Requirements || fresh.SHA256 != pin.SHA256 {
		t.Fatalf("a fresh resolve with 1.1.0 published: %+v (pinned %+v)", fresh, pin)
	}

	// The pinned version, another wheel: installing the pin fails.
	if err := pypitest.DepWheel(wheels, "1.0.0", "another build"); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(wheels, pypitest.WheelFile(pypitest.Dep, "1.1.0")))
	if _, err := Install(context.Background(), pin, dir, t.TempDir(), Options{}); err == nil || !strings.Contains(err.Error(), "HASHES") {
		t.Fatalf("Install with the pinned version's wheel replaced: %v", err)
	}
}

func TestResolveRefusesAnSDist(t *testing.T) {
	pypitest.Need(t)
	wheels := t.TempDir()
	if err := pypitest.SDist(wheels); err != nil {
		t.Fatal(err)
	}
	pypitest.SetEnv(t, wheels)
	spec, _, _ := Parse([]string{"uvx", pypitest.SDistOnly + "==" + pypitest.SDistOnlyV})
	dir := t.TempDir()
	_, err := Resolve(context.Background(), spec, dir, Options{})
	if err == nil || !strings.Contains(err.Error(), "wheels only") || !strings.Contains(err.Error(), "sdist") {
		t.Fatalf("Resolve of an sdist-only package: %v", err)
	}
	if _, serr := os.Stat(filepath.Join(dir, RequirementsName)); serr == nil {
		t.Fatal("a refused resolve wrote requirements.txt")
	}
}

func TestInstallRedoesAnIncompleteEntry(t *testing.T) {
	pin, dir, _ := resolved(t)
	cache := t.TempDir()
	// What a killed install leaves: a venv without a manifest.
	entry := EntryDir(cache, pin)
	os.MkdirAll(filepath.Join(entry, treeDir, "lib"), 0o755)
	os.WriteFile(filepath.Join(entry, treeDir, "lib", "half-written.py"), []byte("x"), 0o444)
	if err := Verify(cache, pin); err == nil || !strings.Contains(err.Error(), "no manifest") {
		t.Fatalf("Verify of an incomplete entry: %v", err)
	}
	got, err := Install(context.Background(), pin, dir, cache, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(cache, got); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(entry, treeDir, "lib", "half-written.py")); err == nil {
		t.Fatal("the incomplete entry's file survived")
	}
}

func TestWalkTreeRefusesLinksOut(t *testing.T) {
	for _, c := range []struct{ link, target string }{
		{"lib/x", "/etc/passwd"},
		{"lib/x", "../../etc/passwd"},
		{"bin/python", "../../outside"},
		{"bin/pythonx", "/usr/bin/python3"},
		{"bin/python3", "/bin/sh"},
	} {
		root := t.TempDir()
		os.MkdirAll(filepath.Join(root, "lib"), 0o755)
		os.MkdirAll(filepath.Join(root, "bin"), 0o755)
		if err := os.Symlink(c.target, filepath.Join(root, filepath.FromSlash(c.link))); err != nil {
			t.Fatal(err)
		}
		if _, _, err := walkTree(root); err == nil || !strings.Contains(err.Error(), "points out of it") {
			t.Errorf("walkTree with %s -> %s: %v", c.link, c.target, err)
		}
	}
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "bin"), 0o755)
	os.Symlink("/usr/bin/python3", filepath.Join(root, "bin", "python3"))
	os.Symlink("python3", filepath.Join(root, "bin", "python"))
	os.Symlink("lib", filepath.Join(root, "lib64"))
	if _, _, err := walkTree(root); err != nil {
		t.Errorf("walkTree of a venv's own links: %v", err)
	}
}

func TestWalkTreeBounds(t *testing.T) {
	root := t.TempDir()
	for i := range 5 {
		os.WriteFile(filepath.Join(root, string(rune('a'+i))), bytes.Repeat([]byte("x"), 100), 0o644)
	}
	defer func(f, b int64) { maxFiles, maxTreeBytes = f, b }(maxFiles, maxTreeBytes)
	maxFiles = 4
	if _, _, err := walkTree(root); err == nil || !strings.Contains(err.Error(), "more than 4 files") {
		t.Errorf("walkTree past maxFiles: %v", err)
	}
	maxFiles, maxTreeBytes = 100, 250
	if _, _, err := walkTree(root); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("walkTree past maxTreeBytes: %v", err)
	}
}

// BenchmarkVerify is the check before each start of a warm cache entry
// (the test server's tree: two packages in a venv), and BenchmarkStart
// that check and the server's start up to its first answer.
func BenchmarkVerify(b *testing.B) {
	pin, cache := benchEntry(b)
	for b.Loop() {
		if err := Verify(cache, pin); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStart(b *testing.B) {
	pin, cache := benchEntry(b)
	for b.Loop() {
		if err := Verify(cache, pin); err != nil {
			b.Fatal(err)
		}
		argv, err := Argv(cache, pin)
		if err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")
		if out, err := cmd.Output(); err != nil || !strings.Contains(string(out), `"result":{}`) {
			b.Fatalf("%s, %v", out, err)
		}
	}
}

func benchEntry(b *testing.B) (*Pin, string) {
	b.Helper()
	pypitest.Need(b)
	wheels := pypitest.Wheels(b, filepath.Join(b.TempDir(), "wheels"), "1.0.0")
	pypitest.SetEnv(b, wheels)
	spec, _, _ := Parse([]string{"uvx", "mcpform-hello-mcp==1.0.0"})
	dir, cache := b.TempDir(), b.TempDir()
	pin, err := Resolve(context.Background(), spec, dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	if pin, err = Install(context.Background(), pin, dir, cache, Options{}); err != nil {
		b.Fatal(err)
	}
	return pin, cache
}

// TestStartRunsNoPthFile: a .pth file in the tree's site-packages (which
// a package nothing imports could carry) runs no code when Argv starts
// the server: the control, the same interpreter started as a console
// script would be (no -S), runs it.
func TestStartRunsNoPthFile(t *testing.T) {
	pin, dir, _ := resolved(t)
	cache := filepath.Join(t.TempDir(), "cache")
	got, err := Install(context.Background(), pin, dir, cache, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sp, err := sitePackages(filepath.Join(EntryDir(cache, got), treeDir))
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "pth-ran")
	pth := filepath.Join(sp, "zz-evil.pth")
	os.Chmod(sp, 0o755)
	if err := os.WriteFile(pth, []byte("import os; open("+strconv.Quote(marker)+", 'w').close()\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	argv, err := Argv(cache, got)
	if err != nil {
		t.Fatal(err)
	}
	control := exec.Command(argv[0], "-I", "-c", "pass")
	if out, err := control.CombinedOutput(); err != nil {
		t.Fatalf("control: %v\n%s", err, out)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("control: the .pth did not run without -S (%v): the test shows nothing", err)
	}
	os.Remove(marker)
	if out := serve(t, argv); !strings.Contains(out, `"id":2`) {
		t.Fatalf("the pinned server did not answer: %s", out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the .pth file ran when Argv started the server")
	}
}
