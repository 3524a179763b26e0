package npmtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// executables are the commands testdata/npm/package.json installs into
// node_modules/.bin, one per pinned package.
var executables = []string{"mcp-inspector", "mcp-inspector-cli", "mcp-server-everything", "mcp-server-filesystem", "mcp-server-memory"}

// BinDir returns the absolute path of testdata/npm/node_modules/.bin.
func BinDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "npm", "node_modules", ".bin")
}

// Missing says what keeps the named executables (every one testdata/npm
// installs when none are named) from running, and how to get it: an
// executable absent from BinDir, or node absent from PATH. It returns ""
// when nothing is missing.
func Missing(names ...string) string {
	if len(names) == 0 {
		names = executables
	}
	for _, name := range names {
		bin := filepath.Join(BinDir(), name)
		if _, err := os.Stat(bin); err != nil {
			return fmt.Sprintf("the npm reference servers are not installed (no %s): run bash scripts/test.sh, which installs them and runs every test, or npm install in testdata/npm", bin)
		}
	}
	if _, err := exec.LookPath("node"); err != nil {
		return "node is not on PATH: the npm reference servers run on Node.js; install it"
	}
	return ""
}

// Bin returns the path of the named executable in BinDir. When it cannot
// run, Bin ends the test as unavailable does.
func Bin(t testing.TB, name string) string {
	t.Helper()
	if why := Missing(name); why != "" {
		unavailable(t, why)
	}
	return filepath.Join(BinDir(), name)
}

// InCI returns, under CI (CI=true), the error a test that needs what why
// (from Missing) says is missing fails with: there the test command has
// just installed the npm servers, and a skip would hide a broken install.
// Elsewhere it returns nil.
func InCI(why string) error {
	if os.Getenv("CI") != "true" {
		return nil
	}
	return fmt.Errorf("CI=true, so the test command (scripts/test.sh) should have installed the npm reference servers and node, but %s", why)
}

// unavailable ends a test that needs what why (from Missing) says is
// missing: it skips, or under CI fails (see InCI).
func unavailable(t testing.TB, why string) {
	t.Helper()
	if err := InCI(why); err != nil {
		t.Fatal(err)
	}
	t.Skip(why)
}
