package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// An attacker's review of signed approvals from the repository's side.

// runWithin runs mcpform with args and fails the test if it has not
// returned within d; unblock is called then, to let it return.
func runWithin(t *testing.T, fx signFixture, d time.Duration, unblock func(), args ...string) (int, string, string) {
	t.Helper()
	type result struct {
		code      int
		out, errb string
	}
	done := make(chan result, 1)
	go func() {
		code, out, errb := fx.run(t, args...)
		done <- result{code, out, errb}
	}()
	select {
	case r := <-done:
		return r.code, r.out, r.errb
	case <-time.After(d):
		unblock()
		<-done
		t.Fatalf("mcpform %s did not return within %v", strings.Join(args, " "), d)
	}
	return 0, "", ""
}

// unblockFIFO opens the FIFO at p for writing and closes it, which lets a
// reader blocked in open(2) go on (and read nothing).
func unblockFIFO(p string) func() {
	return func() {
		if w, err := os.OpenFile(p, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
	}
}

// TestAttackLockAndSigAsFIFO: mcp.lock or mcp.lock.sig replaced by a FIFO
// (or a symlink to /dev/zero or /dev/stdin, which git commits) hung show,
// verify and run, or read them out of memory, before any check; with or
// without a trust file. Each is now refused at once, naming the file. The
// control: the same lock, symlinked as a regular file, loads and verifies.
func TestAttackLockAndSigAsFIFO(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no FIFOs")
	}
	fx := newSignFixture(t)
	if code, out, errb := fx.run(t, "sign", "-key", fx.key, "-signer", "alice@example.com", fx.lockPath); code != exitOK {
		t.Fatalf("sign: %d\n%s%s", code, out, errb)
	}
	// Control: the lock and its signatures through symlinks to regular
	// files are the lock and its signatures.
	dir := filepath.Join(fx.dir, "linked")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	linked := filepath.Join(dir, "mcp.lock")
	if err := os.Symlink(fx.lockPath, linked); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(fx.lockPath+".sig", linked+".sig"); err != nil {
		t.Fatal(err)
	}
	if code, out, errb := fx.run(t, "show", "-lock", linked, "-trust", fx.trust); code != exitOK || !strings.Contains(errb, "approved by alice@example.com") {
		t.Fatalf("control: a symlinked lock and signature file: %d\n%s%s", code, out, errb)
	}

	for _, which := range []string{"mcp.lock", "mcp.lock.sig"} {
		t.Run(which, func(t *testing.T) {
			dir := t.TempDir()
			lockPath := filepath.Join(dir, "mcp.lock")
			data, err := os.ReadFile(fx.lockPath)
			if err != nil {
				t.Fatal(err)
			}
			if which == "mcp.lock.sig" {
				if err := os.WriteFile(lockPath, data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			fifo := filepath.Join(dir, which)
			if err := syscall.Mkfifo(fifo, 0o644); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			for _, args := range [][]string{
				{"show", "-lock", lockPath},
				{"verify", "-lock", lockPath, "-trust", fx.trust},
			} {
				code, out, errb := runWithin(t, fx, 3*time.Second, unblockFIFO(fifo), args...)
				if code == exitOK || !strings.Contains(errb, "not a regular file") {
					t.Errorf("%v with %s a FIFO: exit %d, want a refusal naming it not a regular file\n%s%s", args, which, code, out, errb)
				}
			}
		})
	}
}
