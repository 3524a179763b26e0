package runtime

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpform/mcpform/internal/npmtest"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/mcp"
	"github.com/mcpform/mcpform/surface"
)

// The npm server-everything in its streamableHttp mode (stateful
// sessions, SSE answers, the server's own requests on a call's stream),
// locked as a remote server: the real inspector gets the same answers
// through `mcpform run` as from the URL direct, in the legacy era, and
// through run in the modern era too (which the server does not speak).
func TestInteropRemoteEverything(t *testing.T) {
	inspector := npmtest.Bin(t, "mcp-inspector")
	everything := npmtest.Bin(t, "mcp-server-everything")
	mcpform, _ := built(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	server := exec.Command(everything, "streamableHttp")
	server.Env = append(os.Environ(), fmt.Sprint("PORT=", port))
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Process.Kill(); server.Wait() })
	url := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", fmt.Sprint("127.0.0.1:", port)); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("server-everything did not listen within 30 s")
		}
	}
	caps := []byte(`{"roots":{}}`)
	s, err := mcp.Probe(context.Background(), mcp.ServerSpec{Name: "remote", URL: url, ClientCapabilities: caps})
	if err != nil {
		t.Fatal(err)
	}
	e, err := surface.Entry(s)
	if err != nil {
		t.Fatal(err)
	}
	e.Remote = &lock.Remote{URL: url, Transport: lock.TransportStreamableHTTP}
	e.Mcpform = &lock.Settings{ClientCapabilities: caps}
	dir := t.TempDir()
	lockPath, auditPath := filepath.Join(dir, "mcp.lock"), filepath.Join(dir, "audit.jsonl")
	saveLock(t, lockPath, map[string]*lock.Entry{"remote": e})

	requests := [][]string{
		{"--method", "tools/list"},
		{"--method", "prompts/list"},
		{"--method", "resources/list"},
		{"--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=over http"},
		{"--method", "tools/call", "--tool-name", "get-roots-list"},
		{"--method", "prompts/get", "--prompt-name", "simple-prompt"},
		{"--method", "resources/read", "--uri", "demo://resource/static/document/architecture.md"},
	}
	through := func(era string, req []string) (map[string]any, error) {
		return inspectorIn(inspector, era)(append([]string{mcpform, "run", "-lock", lockPath, "-audit", auditPath, "remote"}, req...))
	}
	compared := 0
	for _, req := range requests {
		what := strings.Join(req, " ")
		direct, err := inspectorIn(inspector, "legacy")(append([]string{"--transport", "http", "--server-url", url}, req...))
		if err != nil {
			t.Errorf("%s direct: %v", what, err)
			continue
		}
		for _, era := range []string{"legacy", "modern"} {
			got, err := through(era, req)
			if err != nil {
				t.Errorf("%s through mcpform run (%s client): %v", what, era, err)
				continue
			}
			d, g := comparable(direct), comparable(got)
			lockedExtra(d, g)
			if !reflect.DeepEqual(d, g) {
				t.Errorf("%s (%s client): through mcpform run\n%.1500s\ndirect\n%.1500s", what, era, mustJSON(g), mustJSON(d))
			}
			compared++
		}
	}
	if compared < 10 {
		t.Errorf("only %d answers were compared", compared)
	}
}
