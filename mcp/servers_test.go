package mcp

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// npmBin returns the path of an npm reference server's executable from
// testdata/npm/node_modules. They are pinned by testdata/npm's package-lock
// and installed by the project's test command; a missing one fails the test
// rather than skipping it, because fakes never stand in for real servers.
func npmBin(t *testing.T, name string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "testdata", "npm")
	bin := filepath.Join(root, "node_modules", ".bin", name)
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s is missing (%v): run the project's test command (.ci/run, which runs `npm ci` in testdata/npm) before go test", bin, err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node is not on PATH (%v): the npm reference servers need it; install Node.js and run the project's test command (.ci/run)", err)
	}
	return bin
}

var (
	buildOnce sync.Once
	buildDir  string
	notesBin  string
	buildErr  error
)

// notesServer builds examples/servers/notes, the Go SDK server that speaks
// both eras, once per test binary.
func notesServer(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "mcpform-mcp-test")
		if buildErr != nil {
			return
		}
		notesBin = filepath.Join(buildDir, "notes")
		_, file, _, _ := runtime.Caller(0)
		cmd := exec.Command("go", "build", "-o", notesBin, "./examples/servers/notes")
		cmd.Dir = filepath.Join(filepath.Dir(file), "..")
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = err
			notesBin = string(out)
		}
	})
	if buildErr != nil {
		t.Fatalf("building examples/servers/notes: %v\n%s", buildErr, notesBin)
	}
	return notesBin
}

func cleanupBuilds() {
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
}
