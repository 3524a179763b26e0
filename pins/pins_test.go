package pins

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpform/mcpform/lock"
)

func sumOf(data string) string {
	h := sha256.Sum256([]byte(data))
	return hex.EncodeToString(h[:])
}

func writeExec(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestScriptArg(t *testing.T) {
	for _, tt := range []struct {
		cmd  []string
		want string // "" for none
	}{
		{[]string{"node", "server.js", "--port", "1"}, "server.js"},
		{[]string{"/usr/local/bin/node", "--enable-source-maps", "dist/index.js"}, "dist/index.js"},
		{[]string{"node", "-r", "dotenv/config", "index.js"}, "index.js"},
		{[]string{"node", "--require=dotenv/config", "index.js"}, "index.js"},
		{[]string{"node", "-e", "console.log(1)"}, ""},
		{[]string{"nodejs", "a.mjs"}, "a.mjs"},
		{[]string{"node22", "a.mjs"}, "a.mjs"},
		{[]string{"python3", "-u", "server.py"}, "server.py"},
		{[]string{"python3.12", "server.py"}, "server.py"},
		{[]string{"python", "-m", "mcp_server_time"}, ""},
		{[]string{"python3", "-c", "print(1)"}, ""},
		{[]string{"python3", "-W", "ignore", "s.py"}, "s.py"},
		{[]string{"deno", "run", "--allow-net", "main.ts"}, "main.ts"},
		{[]string{"bun", "run", "index.ts"}, "index.ts"},
		{[]string{"bun", "index.ts"}, "index.ts"},
		{[]string{"bash", "-c", "exec x"}, ""},
		{[]string{"bash", "-e", "run.sh"}, "run.sh"},
		{[]string{"sh", "--", "run.sh"}, "run.sh"},
		{[]string{"ruby", "-I", "lib", "server.rb"}, "server.rb"},
		{[]string{"perl", "-e", "1"}, ""},
		{[]string{"php", "server.php"}, "server.php"},
		{[]string{"node"}, ""},
		{[]string{"./server", "config.json"}, ""},
		{[]string{"npx", "-y", "pkg@1.0.0"}, ""},
		{[]string{"nodemon", "x.js"}, ""},
	} {
		got, ok := ScriptArg(tt.cmd)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("ScriptArg(%q) = %q, %v; want %q", tt.cmd, got, ok, tt.want)
		}
	}
}

// TestResolveAsExec: a bare name is found where os/exec finds it (mcpform's
// PATH), a relative path from the server's directory, and every symlink is
// followed to the real file.
func TestResolveAsExec(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks and executable bits")
	}
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	real := filepath.Join(root, "opt", "server-1.0")
	writeExec(t, real, "#!/bin/sh\n")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(bin, "server")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	lp, err := exec.LookPath("server")
	if err != nil {
		t.Fatal(err)
	}
	realRoot, _ := filepath.EvalSymlinks(root)
	want := filepath.Join(realRoot, "opt", "server-1.0")
	for _, prog := range []string{"server", lp, "./bin/server", "bin/../bin/server"} {
		got, err := Resolve(prog, root)
		if err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", prog, got, err, want)
		}
	}
	if _, err := Resolve("no-such-server", root); !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("Resolve of a missing name = %v, want exec.ErrNotFound", err)
	}
	if _, err := Resolve("./missing", root); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Resolve of a missing path = %v, want fs.ErrNotExist", err)
	}
}

// TestComputeAndCheck pins a script server's interpreter and script, then
// changes each the ways an update or an attacker would, with the cache
// on: every change is a Mismatch that names the file and the digests.
func TestComputeAndCheck(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks and executable bits")
	}
	root := t.TempDir()
	proj := filepath.Join(root, "proj")
	interp := filepath.Join(root, "usr", "bin", "node")
	writeExec(t, interp, "interpreter v1")
	script := filepath.Join(proj, "server", "index.js")
	writeExec(t, script, "console.log('v1')")
	t.Setenv("PATH", filepath.Dir(interp))
	cmd := []string{"node", "server/index.js"}

	p, err := Compute(cmd, proj, proj)
	if err != nil {
		t.Fatal(err)
	}
	realInterp, _ := filepath.EvalSymlinks(interp)
	want := &lock.Pins{
		Executable: &lock.FilePin{Path: realInterp, SHA256: sumOf("interpreter v1")},
		Script:     &lock.FilePin{Path: "server/index.js", SHA256: sumOf("console.log('v1')")},
	}
	if *p.Executable != *want.Executable || *p.Script != *want.Script {
		t.Fatalf("Compute = %+v %+v, want %+v %+v", p.Executable, p.Script, want.Executable, want.Script)
	}
	cache := NewCache(filepath.Join(root, "state", "pins"))
	for range 2 { // once hashing, once from the cache
		if err := Check(p, cmd, proj, cache); err != nil {
			t.Fatalf("Check of the unchanged files: %v", err)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(root, "state", "pins")); len(entries) != 2 {
		t.Errorf("the cache holds %d entries, want 2 (the interpreter and the script)", len(entries))
	}

	expect := func(what, found string, sub ...string) {
		t.Helper()
		err := Check(p, cmd, proj, cache)
		var m *Mismatch
		if !errors.As(err, &m) || m.What != what {
			t.Fatalf("Check = %v, want a %s mismatch", err, what)
		}
		if m.Found != found {
			t.Errorf("Found = %q, want %q", m.Found, found)
		}
		for _, s := range append(sub, "mcpform plan", "PKG-"+strings.ToUpper(what)+"-CHANGED") {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("the error %q does not say %q", err, s)
			}
		}
	}

	// Rewritten in place, same size, mtime set back: ctime still moves.
	st, _ := os.Stat(script)
	writeExec(t, script, "console.log('v2')")
	if err := os.Chtimes(script, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	realScript, _ := filepath.EvalSymlinks(script)
	expect("script", realScript, "server/index.js", want.Script.SHA256[:12], sumOf("console.log('v2')")[:12])
	writeExec(t, script, "console.log('v1')")
	if err := Check(p, cmd, proj, cache); err != nil {
		t.Fatalf("Check after restoring the script: %v", err)
	}

	// A symlink on PATH pointed at another interpreter.
	other := filepath.Join(root, "evil", "node")
	writeExec(t, other, "interpreter v2")
	if err := os.Rename(interp, interp+".real"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, interp); err != nil {
		t.Fatal(err)
	}
	realOther, _ := filepath.EvalSymlinks(other)
	expect("executable", realOther, realInterp, sumOf("interpreter v2")[:12])

	// Gone from PATH.
	os.Remove(interp)
	expect("executable", "", "missing")

	// A script that is gone.
	if err := os.Rename(interp+".real", interp); err != nil {
		t.Fatal(err)
	}
	os.Remove(script)
	expect("script", "", "missing")

	// No pins (a lock from before pins): nothing to check.
	if err := Check(nil, cmd, proj, cache); err != nil {
		t.Errorf("Check(nil) = %v", err)
	}
}

// TestCacheIsKeyedByStat: the cache is what Check believes for a file
// whose key matches (so it is really used), and ignored once the file's
// key changes.
func TestCacheIsKeyedByStat(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the cache keys on Linux's stat")
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "server")
	writeExec(t, f, "v1")
	c := NewCache(filepath.Join(dir, "cache"))
	if s, err := c.sum(f); err != nil || s != sumOf("v1") {
		t.Fatalf("sum = %q, %v", s, err)
	}
	entry := c.entryPath(f)
	data, err := os.ReadFile(entry)
	if err != nil {
		t.Fatal(err)
	}
	forged := strings.Replace(string(data), sumOf("v1"), sumOf("forged"), 1)
	if err := os.WriteFile(entry, []byte(forged), 0o600); err != nil {
		t.Fatal(err)
	}
	if s, _ := c.sum(f); s != sumOf("forged") {
		t.Fatalf("the cache was not read: sum = %q", s)
	}
	time.Sleep(10 * time.Millisecond)
	if err := os.Chmod(f, 0o755); err != nil { // ctime moves, nothing else
		t.Fatal(err)
	}
	if s, _ := c.sum(f); s != sumOf("v1") {
		t.Errorf("after a chmod the cache still answered %q", s)
	}
}

// BenchmarkCheckNode measures what the check costs a start of a server run
// through the real node binary: hashing it, and the cache's stat and read.
func BenchmarkCheckNode(b *testing.B) {
	node, err := exec.LookPath("node")
	if err != nil {
		b.Skip("no node on PATH")
	}
	p, err := Compute([]string{node}, "", "")
	if err != nil {
		b.Fatal(err)
	}
	if st, err := os.Stat(node); err == nil {
		b.Logf("%s: %d bytes", node, st.Size())
	}
	b.Run("hash", func(b *testing.B) {
		for b.Loop() {
			if err := Check(p, []string{node}, "", nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		c := NewCache(b.TempDir())
		for b.Loop() {
			if err := Check(p, []string{node}, "", c); err != nil {
				b.Fatal(err)
			}
		}
	})
}
