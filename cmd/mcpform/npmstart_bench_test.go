//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// npmStartServer is the server both sides of BenchmarkNPMStart start: the
// real server-everything, at the version testdata/npm pins.
const npmStartServer = "@modelcontextprotocol/server-everything@2026.8.31"

// BenchmarkNPMStart compares, side by side in one run, the start of one
// real npm server until its answer to initialize reaches the client (the
// shutdown after it is not timed):
//
//   - npx-warm: npx -y PKG@VERSION, its npx cache filled by a start before
//     the timer (what a client config without mcpform runs);
//   - node-direct: node with the bin of the same installed tree, no
//     checks (the floor: what starting the server itself costs);
//   - mcpform-cache: mcpform run from the tree the lock pins, installed
//     in mcpform's cache (the tree's manifest checked, node's pin checked,
//     the server started with node, its surface checked against the lock
//     before the client's initialize is answered).
//
// Both need the npm registry for the set-up (plan resolves and installs
// the tree; npx fills its cache), none for the timed starts.
func BenchmarkNPMStart(b *testing.B) {
	if _, err := exec.LookPath("npx"); err != nil {
		b.Skip("npx is not on PATH: install Node.js and npm")
	}
	dir := b.TempDir()
	env := append(os.Environ(),
		"HOME="+filepath.Join(dir, "home"),
		"XDG_CACHE_HOME="+filepath.Join(dir, "cache"),
		"XDG_STATE_HOME="+filepath.Join(dir, "state"),
		"npm_config_cache="+filepath.Join(dir, "npm-cache"),
		"npm_config_update_notifier=false",
	)
	bin := filepath.Join(dir, "mcpform")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	hcl := `server "everything" {
  command = ["npx", "-y", "` + npmStartServer + `", "stdio"]
  env     = ["PATH", "HOME", "npm_config_cache"]
  timeout = "90s"
}
`
	if err := os.WriteFile(filepath.Join(dir, "mcp.hcl"), []byte(hcl), 0o644); err != nil {
		b.Fatal(err)
	}
	apply := exec.Command(bin, "apply", "-auto-approve")
	apply.Dir, apply.Env = dir, env
	if out, err := apply.CombinedOutput(); err != nil {
		b.Fatalf("mcpform apply: %v\n%s", err, out)
	}
	bins, err := filepath.Glob(filepath.Join(dir, "cache", "mcpform", "npm", "*", "tree", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	if err != nil || len(bins) != 1 {
		b.Fatalf("the installed tree's bin: %q, %v", bins, err)
	}
	sides := []struct {
		name string
		argv []string
	}{
		{"npx-warm", []string{"npx", "-y", npmStartServer, "stdio"}},
		{"node-direct", []string{"node", bins[0], "stdio"}},
		{"mcpform-cache", []string{bin, "run", "-lock", filepath.Join(dir, "mcp.lock"), "-audit", filepath.Join(dir, "audit.jsonl"), "everything"}},
	}
	for _, s := range sides {
		startOnce(b, dir, env, s.argv) // warms npx's cache, and each side's page cache
	}
	for _, s := range sides {
		b.Run(s.name, func(b *testing.B) {
			for b.Loop() {
				startOnce(b, dir, env, s.argv)
			}
		})
	}
}

// startOnce starts argv, sends initialize and waits for its answer (timed),
// then closes the server's input and waits for it to exit (not timed).
func startOnce(b *testing.B, dir string, env, argv []string) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	// npx starts the server as its child: on a timeout, end both, so that
	// the read of their output ends too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}` + "\n"
	if _, err := in.Write([]byte(initialize)); err != nil {
		b.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	answered := false
	for !answered && sc.Scan() {
		// npx's server writes "result" before "id".
		line := sc.Bytes()
		answered = bytes.Contains(line, []byte(`"id":1`)) && bytes.Contains(line, []byte(`"result":`))
	}
	// The time to the first answer is what a client waits for; the
	// shutdown is not timed (server-everything takes some 350 ms to exit
	// once a session was initialized, with or without mcpform).
	b.StopTimer()
	in.Close()
	cmd.Wait()
	b.StartTimer()
	if !answered {
		b.Fatalf("%s did not answer initialize:\n%s", argv[0], stderr.Bytes())
	}
}
