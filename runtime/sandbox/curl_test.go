//go:build linux

package sandbox_test

import (
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpform/mcpform/runtime/egress"
	"github.com/mcpform/mcpform/runtime/sandbox"
)

// TestCurlThroughProxy runs a real client, curl, in the sandbox: it finds
// the egress proxy through the variables Command sets, and reaches a listed
// name (plain and through a CONNECT tunnel) but nothing else.
func TestCurlThroughProxy(t *testing.T) {
	requireSandbox(t)
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl is not installed")
	}
	hl, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer hl.Close()
	go http.Serve(hl, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "host-http-ok") }))
	port := strconv.Itoa(hl.Addr().(*net.TCPAddr).Port)

	p, err := egress.New([]string{"127.0.0.1:" + port, "listed.example.com:" + port}, func(egress.Event) {})
	must(t, err)
	p.Resolver = hostResolver{}
	sock := filepath.Join(tempDir(t), "egress.sock")
	el, err := net.Listen("unix", sock)
	must(t, err)
	go p.Serve(el)
	defer p.Close()

	for _, tc := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"http://listed.example.com:" + port + "/"}, true},
		{[]string{"--proxytunnel", "http://listed.example.com:" + port + "/"}, true},
		{[]string{"http://example.org/"}, false},
		{[]string{"--proxytunnel", "http://localhost:" + port + "/"}, false},
		{[]string{"--noproxy", "*", "http://127.0.0.1:" + port + "/"}, false},
	} {
		cmd := exec.Command(curl, append([]string{"-sS", "--fail", "--max-time", "5"}, tc.args...)...)
		cmd.Env = []string{"PATH=/usr/bin:/bin"}
		must(t, sandbox.Command(cmd, sandbox.Spec{Tmp: tempDir(t), Network: true, EgressSocket: sock}))
		out, err := cmd.CombinedOutput()
		got := err == nil && strings.Contains(string(out), "host-http-ok")
		if got != tc.ok {
			t.Errorf("curl %s: ok=%v, want %v: %v %s", strings.Join(tc.args, " "), got, tc.ok, err, out)
		} else {
			t.Logf("curl %s: %s", strings.Join(tc.args, " "), strings.TrimSpace(string(out)))
		}
	}
}
