package npm

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpform/mcpform/internal/npmtest"
)

// needNPM skips (or under CI fails) a test that runs the real npm.
func needNPM(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("npm"); err != nil {
		why := "npm is not on PATH: these tests run the real npm against the registry; install Node.js and npm"
		if err := npmtest.InCI(why); err != nil {
			t.Fatal(err)
		}
		t.Skip(why)
	}
}

// pinned is one package resolved and installed once for the tests that
// share it.
type pinned struct {
	once             sync.Once
	pin              *Pin
	dir, cache, bin  string
	err              error
	resolve, install time.Duration
}

var (
	everything = &pinned{}
	small      = &pinned{}
)

// get resolves and installs argv's package once per test binary.
func (p *pinned) get(t *testing.T, argv ...string) *pinned {
	t.Helper()
	needNPM(t)
	p.once.Do(func() {
		root, err := os.MkdirTemp("", "mcpform-npm-test-")
		if err != nil {
			p.err = err
			return
		}
		p.dir, p.cache = filepath.Join(root, "pin"), filepath.Join(root, "cache")
		spec, _, err := Parse(argv)
		if err != nil {
			p.err = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		t0 := time.Now()
		if p.pin, p.err = Resolve(ctx, spec, p.dir); p.err != nil {
			return
		}
		t1 := time.Now()
		p.bin, p.err = Install(ctx, p.pin, p.dir, p.cache)
		p.resolve, p.install = t1.Sub(t0), time.Since(t1)
	})
	if p.err != nil {
		t.Fatal(p.err)
	}
	return p
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, p := range []*pinned{everything, small, scripted} {
		if p.dir != "" {
			os.RemoveAll(filepath.Dir(p.dir))
		}
	}
	os.Exit(code)
}

func readLock(t *testing.T, p *pinned) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(p.dir, LockfileName))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestResolvePinsWholeTree: server-everything's exact version, its
// registry integrity, and a v3 lockfile in which every package comes from
// the registry with a sha512 integrity.
func TestResolvePinsWholeTree(t *testing.T) {
	p := everything.get(t, "npx", "-y", "@modelcontextprotocol/server-everything@2026.8.31", "stdio")
	pin := p.pin
	t.Logf("Resolve %v, Install %v, %d packages", p.resolve.Round(time.Millisecond), p.install.Round(time.Millisecond), pin.Packages)
	if pin.Package != "@modelcontextprotocol/server-everything" || pin.Version != "2026.8.31" || pin.BinName != "mcp-server-everything" || pin.Bin != "dist/index.js" {
		t.Fatalf("pin = %+v", pin)
	}
	if !strings.HasPrefix(pin.Integrity, "sha512-") || len(pin.Lockfile) != 64 || pin.Packages < 20 {
		t.Fatalf("pin = %+v", pin)
	}
	raw := readLock(t, p)
	var doc struct {
		LockfileVersion int                       `json:"lockfileVersion"`
		Packages        map[string]map[string]any `json:"packages"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.LockfileVersion != 3 || len(doc.Packages) != pin.Packages+1 {
		t.Fatalf("lockfileVersion %d, %d packages", doc.LockfileVersion, len(doc.Packages))
	}
	for path, e := range doc.Packages {
		if path == "" || e["inBundle"] == true {
			continue
		}
		r, _ := e["resolved"].(string)
		i, _ := e["integrity"].(string)
		if !strings.HasPrefix(r, pin.Registry) || !strings.HasPrefix(i, "sha512-") {
			t.Errorf("%s: resolved %q integrity %q", path, r, i)
		}
	}
	if top := doc.Packages["node_modules/"+pin.Package]; top["integrity"] != pin.Integrity || top["version"] != pin.Version {
		t.Errorf("top package %v, pin %+v", top, pin)
	}
	if strings.Contains(pin.Bin, "..") {
		t.Fatal(pin.Bin)
	}
}

// TestRunsFromCacheOffline: with mcpform's cache filled, Install is a
// no-op, Verify passes, and the server starts from the cache and answers
// initialize, all with the registry unroutable.
func TestRunsFromCacheOffline(t *testing.T) {
	p := everything.get(t, "npx", "-y", "@modelcontextprotocol/server-everything@2026.8.31", "stdio")
	t.Setenv("npm_config_registry", "http://127.0.0.1:9/")
	t.Setenv("NPM_CONFIG_OFFLINE", "false")
	bin, err := Install(context.Background(), p.pin, p.dir, p.cache)
	if err != nil || bin != p.bin {
		t.Fatalf("second Install = %q, %v", bin, err)
	}
	files := manifestFiles(t, p)
	os.Remove(filepath.Join(EntryDir(p.cache, p.pin), statName))
	t0 := time.Now()
	if err := Verify(p.cache, p.pin); err != nil {
		t.Fatal(err)
	}
	cold := time.Since(t0)
	t0 = time.Now()
	if err := Verify(p.cache, p.pin); err != nil {
		t.Fatal(err)
	}
	warm := time.Since(t0)
	t.Logf("Verify of %d files: %v cold (no stat cache), %v warm", files, cold.Round(time.Microsecond), warm.Round(time.Microsecond))

	node := filepath.Join(npmtest.BinDir(), "node")
	if _, err := os.Stat(node); err != nil {
		if node, err = exec.LookPath("node"); err != nil {
			t.Skip("no node to start the server with")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, bin, "stdio")
	cmd.Dir = t.TempDir()
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); cmd.Process.Kill(); cmd.Wait() }()
	fmt.Fprintln(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"mcpform-test","version":"0"}}}`)
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var msg struct {
			ID     int `json:"id"`
			Result struct {
				ServerInfo struct{ Name string } `json:"serverInfo"`
			} `json:"result"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) == nil && msg.ID == 1 {
			if msg.Result.ServerInfo.Name == "" {
				t.Fatalf("initialize answered %s", sc.Bytes())
			}
			t.Logf("started from the cache: %s", msg.Result.ServerInfo.Name)
			return
		}
	}
	t.Fatalf("no answer to initialize: %v", sc.Err())
}

func manifestFiles(t *testing.T, p *pinned) int {
	data, err := os.ReadFile(filepath.Join(EntryDir(p.cache, p.pin), manifestName))
	if err != nil {
		t.Fatal(err)
	}
	var m treeManifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return len(m.Files)
}

// TestVerifyCatchesTampering: a changed, grown, removed or added file, or
// a retargeted link, in the cache entry stops the start, naming the file.
func TestVerifyCatchesTampering(t *testing.T) {
	p := small.get(t, "npx", "-y", "semver@7.7.2")
	if err := Verify(p.cache, p.pin); err != nil {
		t.Fatal(err)
	}
	tree := filepath.Join(EntryDir(p.cache, p.pin), treeDir)
	target := filepath.Join(tree, "node_modules", "semver", "functions", "valid.js")
	orig, err := os.ReadFile(target)
	if err != nil {
		t.Fatal(err)
	}
	restore := func() {
		os.Chmod(target, 0o644)
		if err := os.WriteFile(target, orig, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := Verify(p.cache, p.pin); err != nil {
			t.Fatalf("restored: %v", err)
		}
	}
	check := func(name, want string) {
		t.Helper()
		err := Verify(p.cache, p.pin)
		var te *TreeError
		if !errors.As(err, &te) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "mcpform install") {
			t.Errorf("%s: Verify = %v; want a TreeError with %q", name, err, want)
		}
	}
	os.Chmod(target, 0o644)
	// Same size, other bytes: only the hash sees it.
	tampered := []byte(strings.Replace(string(orig), "valid", "VALID", 1))
	if err := os.WriteFile(target, tampered, 0o644); err != nil {
		t.Fatal(err)
	}
	check("same size", "functions/valid.js changed (sha256")
	restore()
	os.Chmod(target, 0o644)
	os.WriteFile(target, append(orig, "\nrequire('child_process')"...), 0o644)
	check("grown", "functions/valid.js changed size")
	restore()
	os.Rename(target, target+".x")
	check("removed", "-valid.js")
	os.Rename(target+".x", target)
	restore()
	// A file node would load before a package directory of the same name.
	shadow := filepath.Join(tree, "node_modules", "semver.js")
	os.WriteFile(shadow, []byte("evil"), 0o644)
	check("added", "+semver.js")
	os.Remove(shadow)
	restore()
	link := filepath.Join(tree, "node_modules", ".bin", "semver")
	old, err := os.Readlink(link)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(link)
	os.Symlink("../semver/bin/other.js", link)
	check("link", "points to ../semver/bin/other.js")
	os.Remove(link)
	os.Symlink(old, link)
	restore()
}

// TestInstallRefusesChangedLockfile: a pinned lockfile edited after
// Resolve is refused by its digest; with the digest forged, by its top
// package's integrity (CheckTop); with that forged too, by npm ci, which
// checks the tarball against it.
func TestInstallRefusesChangedLockfile(t *testing.T) {
	p := small.get(t, "npx", "-y", "semver@7.7.2")
	raw := readLock(t, p)
	fake := sha512.Sum512([]byte("not semver"))
	edited := strings.Replace(string(raw), p.pin.Integrity, "sha512-"+base64.StdEncoding.EncodeToString(fake[:]), 1)
	if edited == string(raw) {
		t.Fatal("the lockfile does not hold the pin's integrity")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, LockfileName), []byte(edited), 0o644)
	cache := t.TempDir()
	if _, err := Install(context.Background(), p.pin, dir, cache); err == nil || !strings.Contains(err.Error(), "changed since it was locked") {
		t.Fatalf("Install of an edited lockfile = %v", err)
	}
	// The lockfile's digest forged into the pin: its top package is not
	// the pinned tarball any more.
	forged := *p.pin
	forged.Lockfile = sha256Hex([]byte(edited))
	if _, err := Install(context.Background(), &forged, dir, cache); err == nil || !strings.Contains(err.Error(), "not the pinned 7.7.2") {
		t.Fatalf("Install of a lockfile whose top package is another tarball = %v", err)
	}
	// The integrity forged into the pin too: npm ci checks the tarball.
	forged.Integrity = "sha512-" + base64.StdEncoding.EncodeToString(fake[:])
	_, err := Install(context.Background(), &forged, dir, cache)
	if err == nil || !strings.Contains(err.Error(), "npm ci") || !strings.Contains(err.Error(), "EINTEGRITY") {
		t.Fatalf("Install of a forged integrity = %v", err)
	}
	if entries, _ := os.ReadDir(cache); len(entries) != 0 {
		t.Errorf("a failed install left %v", entries)
	}
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// scripted is the real esbuild, whose postinstall replaces its JavaScript
// launcher bin/esbuild with the native binary of the platform package it
// depends on: a script whose effect a test can see.
var scripted = &pinned{}

// TestInstallScripts: the real esbuild@0.28.2 is pinned with its
// postinstall listed, ScriptsOf reads the script's text from the installed
// tree, an install without RunScripts leaves the launcher as published
// (the script did not run), and one with RunScripts, in its own cache
// entry, leaves the native binary the script put there; both verify.
func TestInstallScripts(t *testing.T) {
	p := scripted.get(t, "npx", "-y", "esbuild@0.28.2")
	if !slices.Contains(p.pin.InstallScripts, "node_modules/esbuild") {
		t.Fatalf("InstallScripts = %q; want node_modules/esbuild", p.pin.InstallScripts)
	}
	got, err := ScriptsOf(p.cache, p.pin)
	if err != nil {
		t.Fatal(err)
	}
	want := []PackageScripts{{Path: "node_modules/esbuild", Hooks: []Hook{{Name: "postinstall", Command: "node install.js"}}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ScriptsOf (-want +got):\n%s", diff)
	}
	launcher := func(pin *Pin) []byte {
		t.Helper()
		f, err := os.Open(filepath.Join(EntryDir(p.cache, pin), treeDir, "node_modules", "esbuild", "bin", "esbuild"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		head := make([]byte, 4)
		if _, err := io.ReadFull(f, head); err != nil {
			t.Fatal(err)
		}
		return head
	}
	if head := launcher(p.pin); string(head[:2]) != "#!" {
		t.Errorf("without RunScripts, bin/esbuild starts %q: the postinstall ran", head)
	}
	run := *p.pin
	run.RunScripts = true
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	if _, err := Install(ctx, &run, p.dir, p.cache); err != nil {
		t.Fatal(err)
	}
	if EntryDir(p.cache, &run) == EntryDir(p.cache, p.pin) {
		t.Fatal("a tree installed with its scripts run shares the cache entry of one installed without")
	}
	if head := launcher(&run); string(head) != "\x7fELF" {
		t.Errorf("with RunScripts, bin/esbuild starts %q, not the native binary the postinstall links there", head)
	}
	for _, pin := range []*Pin{p.pin, &run} {
		if err := Verify(p.cache, pin); err != nil {
			t.Errorf("Verify(RunScripts=%v): %v", pin.RunScripts, err)
		}
	}
}
