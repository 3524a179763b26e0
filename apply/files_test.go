package apply

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/plan"
)

// TestWriteFilesPyPI: a PyPI server's requirements file is written beside
// the lock when it is the one the planned lock names by digest, and
// refused when it is another, or lies outside the stores.
func TestWriteFilesPyPI(t *testing.T) {
	data := []byte("a==1.0 --hash=sha256:" + strings.Repeat("a", 64) + "\n")
	sum := sha256.Sum256(data)
	const p = ".mcpform/pypi/s/requirements.txt"
	next := &lock.File{Servers: map[string]*lock.Entry{"s": {Mcpform: &lock.Settings{PyPI: &lock.PyPI{
		Requirements: lock.FilePin{Path: p, SHA256: hex.EncodeToString(sum[:])}}}}}}
	planned := func(path string, data []byte) *plan.Plan {
		return &plan.Plan{Servers: []*plan.ServerPlan{{Name: "s", Files: []plan.PlannedFile{{Path: path, Data: data}}}}}
	}
	dir := t.TempDir()
	if err := writeFiles(dir, planned(p, data), next); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, p)); err != nil || string(got) != string(data) {
		t.Fatalf("written %q, %v", got, err)
	}
	for _, c := range []struct {
		path string
		data []byte
		want string
	}{
		{p, append([]byte("b==1.0 --hash=sha256:"+strings.Repeat("b", 64)+"\n"), data...), "is not the file its planned lock names"},
		{".mcpform/pypi/s/../../../evil.txt", data, "which is not under"},
		{".mcpform/pypi/s/sitecustomize.py", data, "is not a requirements file"},
		{"evil/requirements.txt", data, "which is not under"},
	} {
		if err := writeFiles(t.TempDir(), planned(c.path, c.data), next); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("writeFiles(%s) = %v, want %q", c.path, err, c.want)
		}
	}
}

// TestWriteFilesStaysInLockDir: a .mcpform committed as a symlink out of
// the repository does not send apply's writes there; the control, the same
// write with .mcpform a plain directory, lands beside the lock.
func TestWriteFilesStaysInLockDir(t *testing.T) {
	data := []byte("a==1.0 --hash=sha256:" + strings.Repeat("a", 64) + "\n")
	sum := sha256.Sum256(data)
	const p = ".mcpform/pypi/s/requirements.txt"
	next := &lock.File{Servers: map[string]*lock.Entry{"s": {Mcpform: &lock.Settings{PyPI: &lock.PyPI{
		Requirements: lock.FilePin{Path: p, SHA256: hex.EncodeToString(sum[:])}}}}}}
	planned := &plan.Plan{Servers: []*plan.ServerPlan{{Name: "s", Files: []plan.PlannedFile{{Path: p, Data: data}}}}}

	dir, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, ".mcpform")); err != nil {
		t.Fatal(err)
	}
	if err := writeFiles(dir, planned, next); err == nil {
		t.Error("writeFiles through a .mcpform symlink out of the lock's directory succeeded")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("apply wrote outside the lock's directory: %v", entries)
	}

	control := t.TempDir()
	if err := writeFiles(control, planned, next); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(control, p)); err != nil || string(got) != string(data) {
		t.Errorf("control: %q, %v", got, err)
	}
}
