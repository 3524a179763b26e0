package pypitest

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// The packages Wheels writes.
const (
	Server      = "mcpform-hello-mcp"
	Dep         = "mcpform-hello-dep"
	DepVersion  = "1.0.0"
	Script      = "mcpform-hello-mcp"
	EntryPoint  = "mcpform_hello_mcp.server:main"
	SDistOnly   = "mcpform-sdist-only"
	SDistOnlyV  = "1.0.0"
	versionMark = "@VERSION@"
)

func testdata() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "testdata")
}

var (
	missingMu sync.Mutex
	missing   = map[string]string{}
)

// SystemPython is Debian's interpreter, which the sandbox's system
// directories cover (a sandboxed PyPI server runs on it).
const SystemPython = "/usr/bin/python3"

// Missing says what keeps the PyPI tests from running (python3 on PATH
// without its venv module, or without pip 22.3 or later, which --python
// needs), and how to get it; "" when nothing is missing.
func Missing() string { return MissingFor("python3") }

// MissingFor is Missing for another interpreter (SystemPython).
func MissingFor(python string) string {
	missingMu.Lock()
	defer missingMu.Unlock()
	if why, ok := missing[python]; ok {
		return why
	}
	why := ""
	if _, err := exec.LookPath(python); err != nil {
		why = python + " is not there: install python3, python3-venv and python3-pip (bash scripts/test.sh does it with apt-get)"
	} else if out, err := exec.Command(python, "-m", "venv", "--help").CombinedOutput(); err != nil {
		why = fmt.Sprintf("%s -m venv does not run (%v: %s): install python3-venv (bash scripts/test.sh does it with apt-get)", python, err, bytes.TrimSpace(out))
	} else if out, err := exec.Command(python, "-c", "import pip, sys; v = tuple(int(x) for x in pip.__version__.split('.')[:2]); sys.exit(0 if v >= (22, 3) else 1)").CombinedOutput(); err != nil {
		why = fmt.Sprintf("%s has no pip 22.3 or later (%v: %s): install python3-pip (bash scripts/test.sh does it with apt-get)", python, err, bytes.TrimSpace(out))
	}
	missing[python] = why
	return why
}

// Need ends a test that needs python3, venv and pip when they are
// missing: it skips, or under CI (CI=true) fails, since there the test
// command has just installed them and a skip would hide that nothing
// real ran.
func Need(t testing.TB) {
	t.Helper()
	why := Missing()
	if why == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true, so the test command (scripts/test.sh) should have installed python3 with venv and pip, but %s", why)
	}
	t.Skip(why)
}

// Env is the pip configuration of a test: no configuration file, no
// index, the wheels in dir only.
func Env(dir string) []string {
	return []string{"PIP_CONFIG_FILE=" + os.DevNull, "PIP_NO_INDEX=1", "PIP_FIND_LINKS=" + dir, "PIP_INDEX_URL=", "PIP_EXTRA_INDEX_URL="}
}

// SetEnv sets Env(dir) for the test.
func SetEnv(t testing.TB, dir string) {
	for _, kv := range Env(dir) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}

// Wheels writes into dir the wheel of mcpform-hello-dep 1.0.0 and one of
// mcpform-hello-mcp for each version (its serverInfo says which; it
// requires mcpform-hello-dep>=1.0, so a later dep in dir is what a fresh
// resolve picks), and returns dir.
func Wheels(t testing.TB, dir string, versions ...string) string {
	t.Helper()
	if err := WriteWheels(dir, versions...); err != nil {
		t.Fatal(err)
	}
	return dir
}

// WriteWheels is Wheels without a test.
func WriteWheels(dir string, versions ...string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := DepWheel(dir, DepVersion, ""); err != nil {
		return err
	}
	for _, v := range versions {
		if err := writeWheel(dir, Server, v, filepath.Join(testdata(), Server), []string{Dep + ">=1.0"}, Script+" = "+EntryPoint+"\n", ""); err != nil {
			return err
		}
	}
	return nil
}

// DepWheel writes (or replaces) the wheel of mcpform-hello-dep at version
// into dir; a non-empty extra is added to its module as a comment, so
// the same version comes as another file with another sha256.
func DepWheel(dir, version, extra string) error {
	return writeWheel(dir, Dep, version, filepath.Join(testdata(), Dep), nil, "", extra)
}

// WheelFile is the file name of a package's wheel.
func WheelFile(name, version string) string {
	return strings.ReplaceAll(name, "-", "_") + "-" + version + "-py3-none-any.whl"
}

// writeWheel writes name-version's wheel from the package directories
// under src, with requires and console scripts.
func writeWheel(dir, name, version, src string, requires []string, consoleScripts, extra string) error {
	files := map[string][]byte{}
	var order []string
	add := func(p string, data []byte) { files[p] = data; order = append(order, p) }
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data = bytes.ReplaceAll(data, []byte(versionMark), []byte(version))
		if extra != "" && strings.HasSuffix(p, ".py") {
			data = append(data, []byte("# "+extra+"\n")...)
		}
		add(filepath.ToSlash(rel), data)
		return nil
	})
	if err != nil {
		return err
	}
	info := strings.ReplaceAll(name, "-", "_") + "-" + version + ".dist-info/"
	var meta strings.Builder
	fmt.Fprintf(&meta, "Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: mcpform's PyPI test package\n", name, version)
	for _, r := range requires {
		fmt.Fprintf(&meta, "Requires-Dist: %s\n", r)
	}
	add(info+"METADATA", []byte(meta.String()))
	add(info+"WHEEL", []byte("Wheel-Version: 1.0\nGenerator: mcpform-pypitest\nRoot-Is-Purelib: true\nTag: py3-none-any\n"))
	if consoleScripts != "" {
		add(info+"entry_points.txt", []byte("[console_scripts]\n"+consoleScripts))
	}
	var record strings.Builder
	for _, p := range order {
		sum := sha256.Sum256(files[p])
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", p, base64.RawURLEncoding.EncodeToString(sum[:]), len(files[p]))
	}
	fmt.Fprintf(&record, "%sRECORD,,\n", info)
	add(info+"RECORD", []byte(record.String()))
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	for _, p := range order {
		w, err := z.CreateHeader(&zip.FileHeader{Name: p, Method: zip.Deflate, Modified: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
		if err != nil {
			return err
		}
		if _, err := w.Write(files[p]); err != nil {
			return err
		}
	}
	if err := z.Close(); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, WheelFile(name, version)), buf.Bytes(), 0o644)
}

// SDist writes an sdist of mcpform-sdist-only 1.0.0 into dir, the only
// distribution of that package: pinning it must be refused, since
// installing it would run its setup.py.
func SDist(dir string) error {
	base := SDistOnly + "-" + SDistOnlyV
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range []struct{ name, body string }{
		{base + "/PKG-INFO", "Metadata-Version: 2.1\nName: " + SDistOnly + "\nVersion: " + SDistOnlyV + "\n"},
		{base + "/setup.py", "raise SystemExit('mcpform must never run this setup.py')\n"},
	} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.body)), ModTime: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}); err != nil {
			return err
		}
		if _, err := tw.Write([]byte(f.body)); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, base+".tar.gz"), buf.Bytes(), 0o644)
}
