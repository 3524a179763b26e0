//go:build unix

package lockedfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadRegular: a regular file (and a symlink to one) is read; a FIFO,
// a device, a directory and a file over the limit are refused without
// blocking or reading them.
func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mcp.lock")
	if err := os.WriteFile(file, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{file, link} {
		if data, err := ReadRegular(p, 2); err != nil || string(data) != "{}" {
			t.Fatalf("%s: %q, %v", p, data, err)
		}
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{fifo: "not a regular file", zero: "not a regular file", dir: "not a regular file", file + "x": "no such file"} {
		if _, err := ReadRegular(p, 1<<20); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", p, err, want)
		}
	}
	if _, err := ReadRegular(file, 1); err == nil || !strings.Contains(err.Error(), "larger than 1 bytes") {
		t.Errorf("over the limit: %v", err)
	}
}
