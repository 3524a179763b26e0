package mcp

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

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
