//go:build linux

package sandbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mcpform/mcpform/runtime/sandbox"
)

// The test binary is also every server these tests sandbox: TestMain runs
// a sandbox stage when re-executed as one (as mcpform's main does), and a
// helper mode named by SANDBOXTEST_MODE otherwise.
func TestMain(m *testing.M) {
	sandbox.MaybeRunStage()
	if mode := os.Getenv("SANDBOXTEST_MODE"); mode != "" {
		os.Exit(helper(mode))
	}
	os.Exit(m.Run())
}

// helper runs one of the test binary's server modes.
func helper(mode string) int {
	switch mode {
	case "true":
		return 0
	case "exit3":
		return 3
	case "hostile":
		return hostile()
	case "view":
		return viewServer()
	case "limits":
		return limitsServer()
	case "alloc":
		return alloc()
	case "lstat":
		return lstatPaths()
	case "nonet":
		return nonet()
	case "readfile":
		if b, err := os.ReadFile(os.Getenv("HT_FILE")); err != nil {
			os.Stdout.WriteString("READ failed: " + err.Error() + "\n")
		} else {
			os.Stdout.WriteString("READ ok: " + string(b) + "\n")
		}
		return 0
	case "launcher":
		return launcher()
	case "x32":
		return x32()
	case "spawn":
		return spawnGrandchild()
	case "sleeper":
		return sleeper()
	}
	if f, ok := reviewModes[mode]; ok {
		return f()
	}
	os.Stderr.WriteString("unknown SANDBOXTEST_MODE " + mode + "\n")
	return 99
}

// requireSandbox skips, naming what is missing, when the kernel cannot
// enforce the sandbox. On the project's machines it has everything, so
// these tests run there.
func requireSandbox(t testing.TB) {
	t.Helper()
	if err := sandbox.Supported(); err != nil {
		t.Skipf("kernel capability missing: %v", err)
	}
}

// selfCommand returns a command that runs this test binary in mode, with
// only the given environment (plus PATH).
func selfCommand(t testing.TB, mode string, env ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append([]string{"SANDBOXTEST_MODE=" + mode, "PATH=/usr/local/bin:/usr/bin:/bin"}, env...)
	return cmd
}

// tempDir is t.TempDir resolved through symlinks, so paths compare equal
// inside and outside the sandbox.
func tempDir(t testing.TB) string {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}
