package approval

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// An attacker's review of the signed-approvals boundary, from the side of
// someone who can write the repository (mcp.lock, mcp.lock.sig) but not
// the trust file.

// TestAttackSigFileFIFO: mcp.lock.sig committed as (or replaced by) a FIFO
// hung every command that reads it, with or without a trust policy: the
// open blocked until a writer came, and SIGTERM did not end it (mcpform
// catches it; the open is not interruptible). The control: a regular file
// reached through a symlink loads.
func TestAttackSigFileFIFO(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no FIFOs")
	}
	dir := t.TempDir()
	// Control: a symlinked regular signature file is read as the file.
	real := filepath.Join(dir, "real.sig")
	if err := os.WriteFile(real, []byte(`{"version":1,"signatures":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.sig")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(link); err != nil {
		t.Fatalf("control: a symlinked regular signature file: %v", err)
	}

	fifo := filepath.Join(dir, "mcp.lock.sig")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := Load(fifo)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("Load of a FIFO: %v, want a refusal naming it not a regular file", err)
		}
	case <-time.After(3 * time.Second):
		// Unblock the reader, so the test ends.
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		<-done
		t.Fatal("Load blocked on a FIFO as mcp.lock.sig")
	}
}

// TestAttackSigFileDevices: mcp.lock.sig as a symlink (which git
// commits) to /dev/zero read until memory ran out (the size bound was
// checked after the read), and to /dev/stdin read `mcpform run`'s client
// stream, the MCP messages, until the client closed it. Each is refused
// without being read.
func TestAttackSigFileDevices(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no /dev")
	}
	dir := t.TempDir()
	for _, dev := range []string{"/dev/zero", "/dev/null", "/dev/stdin", "/dev/tty"} {
		if _, err := os.Stat(dev); err != nil {
			continue
		}
		link := filepath.Join(dir, filepath.Base(dev)+".sig")
		if err := os.Symlink(dev, link); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(link); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("Load of a symlink to %s: %v, want refused as not a regular file", dev, err)
		}
	}
	// A directory is refused as well, and a file over the bound before
	// it is read.
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Load of a directory: %v", err)
	}
	big := filepath.Join(dir, "big.sig")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(maxFile + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := Load(big); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("Load of an oversized file: %v", err)
	}
}
