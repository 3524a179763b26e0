package lock

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mcpform/mcpform/internal/lockedfile"
)

// tempsIn lists the names in dir that are temporary files of dir/mcp.lock.
func tempsIn(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if lockedfile.IsTemp(filepath.Join(dir, "mcp.lock"), e.Name()) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names
}

// TestWriteRemovesStaleTemps leaves temporary files as a killed writer
// does, beside files that only look like them, and checks that a failed
// update touches none of them and the next write removes exactly the stale
// ones.
func TestWriteRemovesStaleTemps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp.lock")
	if err := Save(path, sampleFile(t)); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	stale := []string{".mcp.lock.tmp-1", ".mcp.lock.tmp-4294967295", ".mcp.lock.tmp-0012"}
	survivors := []string{
		".mcp.lock.tmp-",       // no random part
		".mcp.lock.tmp-12a",    // not os.CreateTemp's
		".mcp.lock.tmp-12.bak", // a copy someone made
		"mcp.lock.tmp-12",      // no leading dot
		".other.lock.tmp-12",   // another file's writer
		".mcp.lock.flock",      // the Windows lock file
		".plan.tmp-12",         // the plan writer's
		"notes.txt",            // unrelated
		".mcp.lock.tmp-9x",     // digits then more
	}
	for _, name := range append(append([]string{}, stale...), survivors...) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(`{"lockfileVersion":`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A directory and a file in a subdirectory with a temporary file's name
	// are not this writer's files either.
	if err := os.Mkdir(filepath.Join(dir, ".mcp.lock.tmp-77"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", ".mcp.lock.tmp-5"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	survivors = append(survivors, ".mcp.lock.tmp-77", filepath.Join("sub", ".mcp.lock.tmp-5"))

	// A failed update writes nothing, and removes nothing.
	err := UpdateWait(path, -1, func([]byte) (*File, error) { return nil, errors.New("stale plan") })
	if err == nil {
		t.Fatal("Update with a failing callback succeeded")
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("a failed update changed the lock")
	}
	for _, name := range stale {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("a failed update removed %s: %v", name, err)
		}
	}

	f := sampleFile(t)
	f.Generator = "mcpform 0.2.0"
	if err := Save(path, f); err != nil {
		t.Fatal(err)
	}
	for _, name := range stale {
		if _, err := os.Lstat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("stale %s survived the write: %v", name, err)
		}
	}
	for _, name := range survivors {
		if _, err := os.Lstat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s is not a stale temporary file but was removed: %v", name, err)
		}
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Generator != "mcpform 0.2.0" {
		t.Errorf("lock after the write has generator %q", got.Generator)
	}
}

// killChildEnv names the lock a re-executed test binary writes before it is
// killed in the middle of the write.
const killChildEnv = "MCPFORM_LOCK_KILL_CHILD"

// TestKilledWriterTempRemovedByNextWrite kills (SIGKILL) three writers in
// turn, each a re-executed test binary stopped with its temporary file
// written and synced, just before its rename. Each leaves mcp.lock
// byte-identical and its temporary file behind, and each next write (the
// next child's, then the test's own) removes the one before.
func TestKilledWriterTempRemovedByNextWrite(t *testing.T) {
	if path := os.Getenv(killChildEnv); path != "" {
		killedWriterChild(path)
		return
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp.lock")
	if err := Save(path, sampleFile(t)); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	for range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKilledWriterTempRemovedByNextWrite$", "-test.count=1")
		cmd.Env = append(os.Environ(), killChildEnv+"="+path)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line := make(chan string, 1)
		go func() {
			s, _ := bufio.NewReader(out).ReadString('\n')
			line <- s
		}()
		var tmp string
		select {
		case s := <-line:
			tmp = strings.TrimPrefix(strings.TrimSpace(s), "tmp ")
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("the child writer never reached its rename")
		}
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		if filepath.Dir(tmp) != dir || !lockedfile.IsTemp(path, filepath.Base(tmp)) {
			t.Fatalf("the child reported temporary file %q", tmp)
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
			t.Fatal("a writer killed before its rename changed the lock")
		}
		// Only the writer just killed has a file here: the one killed
		// before it was removed by this one's write.
		if got := tempsIn(t, dir); len(got) != 1 || got[0] != filepath.Base(tmp) {
			t.Fatalf("after a kill the directory holds temporary files %q, want only %q", got, filepath.Base(tmp))
		}
	}

	f := sampleFile(t)
	f.Generator = "mcpform 0.2.0"
	if err := Save(path, f); err != nil {
		t.Fatal(err)
	}
	if got := tempsIn(t, dir); len(got) != 0 {
		t.Errorf("temporary files %q survived the next write", got)
	}
	want, _ := Marshal(f)
	if after, _ := os.ReadFile(path); !bytes.Equal(after, want) {
		t.Error("the next write did not leave its lock")
	}
}

// killedWriterChild writes a changed lock to path and, with its temporary
// file in place and the directory's lock held, reports the file's name and
// waits to be killed.
func killedWriterChild(path string) {
	err := update(path, func(current []byte) (*File, error) {
		f, err := Parse(current)
		if err != nil {
			return nil, err
		}
		f.Generator = "killed writer"
		return f, nil
	}, -1, func(tmp string) {
		os.Stdout.WriteString("tmp " + tmp + "\n")
		time.Sleep(time.Hour)
	})
	// Reached only if the hook never ran.
	os.Stderr.WriteString("child writer returned: " + errString(err) + "\n")
	os.Exit(2)
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}

// TestLiveTempSurvivesConcurrentWriter pauses one writer with its
// temporary file in place and starts a second: the second must wait for
// the directory's lock rather than remove the first one's file, and both
// writes must land in order.
func TestLiveTempSurvivesConcurrentWriter(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp.lock")
	if err := Save(path, sampleFile(t)); err != nil {
		t.Fatal(err)
	}
	paused, resume := make(chan string), make(chan struct{})
	first, second := sampleFile(t), sampleFile(t)
	first.Generator, second.Generator = "first", "second"
	firstDone := make(chan error, 1)
	go func() {
		firstDone <- update(path, func([]byte) (*File, error) { return first, nil }, -1, func(tmp string) {
			paused <- tmp
			<-resume
		})
	}()
	tmp := <-paused
	secondDone := make(chan error, 1)
	go func() { secondDone <- Save(path, second) }()
	select {
	case err := <-secondDone:
		close(resume)
		t.Fatalf("the second writer finished (%v) while the first held the lock", err)
	case <-time.After(200 * time.Millisecond):
	}
	if _, err := os.Stat(tmp); err != nil {
		t.Errorf("the paused writer's temporary file is gone: %v", err)
	}
	close(resume)
	if err := <-firstDone; err != nil {
		t.Fatalf("the first writer: %v", err)
	}
	if err := <-secondDone; err != nil {
		t.Fatalf("the second writer: %v", err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Generator != "second" {
		t.Errorf("lock has generator %q, want the second writer's", got.Generator)
	}
	if names := tempsIn(t, dir); len(names) != 0 {
		t.Errorf("temporary files %q left after both writes", names)
	}
}
