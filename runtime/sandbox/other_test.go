//go:build !linux

package sandbox_test

import (
	"os/exec"
	"testing"

	"github.com/mcpform/mcpform/runtime/sandbox"
)

// Outside Linux a server with a sandbox policy must not start.
func TestRefusesOutsideLinux(t *testing.T) {
	if sandbox.Supported() == nil {
		t.Fatal("Supported reported a sandbox outside Linux")
	}
	if err := sandbox.Command(exec.Command("true"), sandbox.Spec{Tmp: t.TempDir()}); err == nil {
		t.Fatal("Command succeeded outside Linux")
	}
}
