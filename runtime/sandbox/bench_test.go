//go:build linux

package sandbox_test

import (
	"testing"

	"github.com/mcpform/mcpform/runtime/sandbox"
)

// BenchmarkStart compares starting the same server (this test binary in
// mode "true", which exits at once) directly and in the sandbox. The
// sandbox adds two re-executions of the binary (stage 1 and stage 2), the
// namespaces, a procfs mount, the Landlock ruleset and the seccomp filter.
func BenchmarkStart(b *testing.B) {
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			if err := selfCommand(b, "true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sandboxed", func(b *testing.B) {
		requireSandbox(b)
		tmp := tempDir(b)
		for b.Loop() {
			cmd := selfCommand(b, "true")
			if err := sandbox.Command(cmd, sandbox.Spec{Tmp: tmp}); err != nil {
				b.Fatal(err)
			}
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
