package lockedfile

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestWriteFileReplacesAtomically(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var seen string
	err := WriteFile(path, []byte("new\n"), 0o600, func(tmp string) {
		seen = tmp
		// Just before the rename: the new bytes are whole in the temporary
		// file and path still holds the old ones.
		if got, err := os.ReadFile(tmp); err != nil || string(got) != "new\n" {
			t.Errorf("temporary file holds %q (%v), want the new bytes", got, err)
		}
		if got, _ := os.ReadFile(path); string(got) != "old\n" {
			t.Errorf("before the rename %s holds %q, want the old bytes", path, got)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(seen) != dir || !IsTemp(path, filepath.Base(seen)) {
		t.Errorf("temporary file %q is not one of %s's in its directory", seen, path)
	}
	if got, _ := os.ReadFile(path); string(got) != "new\n" {
		t.Errorf("%s holds %q after WriteFile", path, got)
	}
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("mode %v, want 0600", fi.Mode().Perm())
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries after WriteFile, want only %s", len(entries), path)
	}
}

func TestWriteFileFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	// The target is a non-empty directory: the rename fails, after the
	// temporary file was written.
	path := filepath.Join(dir, "taken")
	if err := os.MkdirAll(filepath.Join(path, "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("x"), 0o644, nil); err == nil {
		t.Fatal("WriteFile over a non-empty directory succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "taken" {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("after a failed WriteFile the directory holds %q, want only taken", names)
	}
	if err := WriteFile(filepath.Join(dir, "missing", "f"), []byte("x"), 0o644, nil); err == nil {
		t.Error("WriteFile into a missing directory succeeded")
	}
}

func TestIsTemp(t *testing.T) {
	path := filepath.Join("some", "dir", "mcp.lock")
	for name, want := range map[string]bool{
		".mcp.lock.tmp-1":          true,
		".mcp.lock.tmp-4294967295": true,
		".mcp.lock.tmp-0012":       true,
		".mcp.lock.tmp-":           false, // no random part
		".mcp.lock.tmp-12a":        false, // not os.CreateTemp's
		".mcp.lock.tmp-12.bak":     false, // a copy someone made
		"mcp.lock.tmp-12":          false, // no leading dot
		".other.lock.tmp-12":       false, // another file's writer
		".mcp.lock":                false,
		"mcp.lock":                 false,
	} {
		if got := IsTemp(path, name); got != want {
			t.Errorf("IsTemp(%q, %q) = %v, want %v", path, name, got, want)
		}
	}
}

func TestRemoveTemps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "plan")
	stale := []string{".plan.tmp-1", ".plan.tmp-99"}
	kept := []string{"plan", ".plan.tmp-x", ".other.tmp-1", "notes.txt"}
	for _, name := range append(append([]string{}, stale...), kept...) {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A directory with a temporary file's name is not one.
	if err := os.Mkdir(filepath.Join(dir, ".plan.tmp-7"), 0o755); err != nil {
		t.Fatal(err)
	}
	kept = append(kept, ".plan.tmp-7")
	RemoveTemps(path)
	for _, name := range stale {
		if _, err := os.Lstat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s survived RemoveTemps: %v", name, err)
		}
	}
	for _, name := range kept {
		if _, err := os.Lstat(filepath.Join(dir, name)); err != nil {
			t.Errorf("RemoveTemps removed %s: %v", name, err)
		}
	}
}

// openLock opens dir's lock as a writer would.
func openLock(t *testing.T, dir string) *os.File {
	t.Helper()
	f, err := OpenDir(dir, ".lock")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestLockExcludesOtherOpenFiles takes the lock through one open file and
// checks that another open file of the same directory cannot take it until
// it is released, and that Lock waits for the release.
func TestLockExcludesOtherOpenFiles(t *testing.T) {
	dir := t.TempDir()
	a, b := openLock(t, dir), openLock(t, dir)
	if err := Lock(a); err != nil {
		t.Fatal(err)
	}
	acquired := lockWaits(t, b, "another")
	if err := Unlock(a); err != nil {
		t.Fatal(err)
	}
	acquired("the holder released the lock")
	if ok, err := TryLock(a); ok || err != nil {
		t.Fatalf("TryLock while the second holds the lock = %v, %v; want false, nil", ok, err)
	}
	if err := Unlock(b); err != nil {
		t.Fatal(err)
	}
	if ok, err := TryLock(a); !ok || err != nil {
		t.Fatalf("TryLock of a free lock = %v, %v; want true, nil", ok, err)
	}
}

// holderEnv names the directory a re-executed test binary locks before it
// reports and waits to be killed.
const holderEnv = "MCPFORM_LOCKEDFILE_HOLDER"

// TestLockBetweenProcesses has a re-executed test binary take the lock and
// hold it: this process cannot take it, and can once the holder is killed
// (SIGKILL on Unix), since the kernel releases a dead holder's lock.
func TestLockBetweenProcesses(t *testing.T) {
	if dir := os.Getenv(holderEnv); dir != "" {
		holdLock(dir)
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockBetweenProcesses$", "-test.count=1")
	cmd.Env = append(os.Environ(), holderEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- s
	}()
	select {
	case s := <-line:
		if strings.TrimSpace(s) != "locked" {
			t.Fatalf("the holder said %q", s)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the holder never took the lock")
	}
	f := openLock(t, dir)
	acquired := lockWaits(t, f, "another process")
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	acquired("the holder was killed")
}

// lockWaits checks that f cannot take the lock while holder holds it:
// TryLock fails and Lock waits. The Lock goes on waiting; acquired checks
// that it returns once the holder has let go (after says how).
func lockWaits(t *testing.T, f *os.File, holder string) (acquired func(after string)) {
	t.Helper()
	if ok, err := TryLock(f); ok || err != nil {
		t.Fatalf("TryLock while %s holds the lock = %v, %v; want false, nil", holder, ok, err)
	}
	locked := make(chan error, 1)
	go func() { locked <- Lock(f) }()
	select {
	case err := <-locked:
		t.Fatalf("Lock returned (%v) while %s held the lock", err, holder)
	case <-time.After(100 * time.Millisecond):
	}
	return func(after string) {
		t.Helper()
		select {
		case err := <-locked:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("Lock still waiting after %s", after)
		}
	}
}

// holdLock takes dir's lock, reports it and waits to be killed.
func holdLock(dir string) {
	f, err := OpenDir(dir, ".lock")
	if err == nil {
		err = Lock(f)
	}
	if err != nil {
		os.Stderr.WriteString("holder: " + err.Error() + "\n")
		os.Exit(2)
	}
	os.Stdout.WriteString("locked\n")
	time.Sleep(time.Hour)
	os.Exit(2)
}
