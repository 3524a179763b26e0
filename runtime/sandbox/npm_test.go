//go:build linux

package sandbox_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpform/mcpform/internal/npmtest"
	"github.com/mcpform/mcpform/runtime/sandbox"
)

// rpcClient speaks newline-delimited JSON-RPC to a server's stdio, written
// by hand so this test depends on nothing but the server.
type rpcClient struct {
	t   *testing.T
	in  io.WriteCloser
	out *bufio.Scanner
	id  int
}

func (c *rpcClient) send(method string, params any, notify bool) json.RawMessage {
	c.t.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
	if !notify {
		c.id++
		msg["id"] = c.id
	}
	b, _ := json.Marshal(msg)
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatalf("writing %s: %v", method, err)
	}
	if notify {
		return nil
	}
	for c.out.Scan() {
		var resp struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(c.out.Bytes(), &resp); err != nil {
			c.t.Fatalf("server wrote a line that is not JSON: %q", c.out.Text())
		}
		if resp.ID == nil || *resp.ID != c.id {
			continue // a notification or a request from the server
		}
		if resp.Error != nil {
			return resp.Error
		}
		return resp.Result
	}
	c.t.Fatalf("server closed stdout while we waited for %s: %v", method, c.out.Err())
	return nil
}

// startFilesystemServer runs the npm server with args under spec and
// initializes it.
func startFilesystemServer(t *testing.T, spec sandbox.Spec, args ...string) (*rpcClient, *strings.Builder) {
	cmd := exec.Command(npmtest.Bin(t, "mcp-server-filesystem"), args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + spec.Protect[0]}
	spec.Tmp = tempDir(t)
	if err := sandbox.Command(cmd, spec); err != nil {
		t.Fatal(err)
	}
	in, err := cmd.StdinPipe()
	must(t, err)
	out, err := cmd.StdoutPipe()
	must(t, err)
	stderr := &strings.Builder{}
	cmd.Stderr = stderr
	must(t, cmd.Start())
	t.Cleanup(func() {
		in.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<20)
	c := &rpcClient{t: t, in: in, out: sc}
	res := c.send("initialize", map[string]any{
		"protocolVersion": "2025-06-18",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "sandbox-test", "version": "0"},
	}, false)
	if !strings.Contains(string(res), "protocolVersion") {
		t.Fatalf("initialize: %s\nstderr: %s", res, stderr)
	}
	c.send("notifications/initialized", map[string]any{}, true)
	return c, stderr
}

// readTextFile calls read_text_file and returns the text and isError.
func readTextFile(c *rpcClient, path string) (string, bool) {
	res := c.send("tools/call", map[string]any{"name": "read_text_file", "arguments": map[string]any{"path": path}}, false)
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(res, &r); err != nil || len(r.Content) == 0 {
		return string(res), true
	}
	return r.Content[0].Text, r.IsError
}

// TestNPMFilesystemServer runs the real reference filesystem server in the
// sandbox, limited to one directory by its own argument and by the sandbox.
func TestNPMFilesystemServer(t *testing.T) {
	requireSandbox(t)
	home, dir, outside := tempDir(t), tempDir(t), tempDir(t)
	must(t, os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello from the allowed directory"), 0o644))
	must(t, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("outside secret"), 0o644))
	must(t, os.MkdirAll(filepath.Join(home, ".ssh"), 0o700))
	must(t, os.WriteFile(filepath.Join(home, ".ssh", "id_rsa"), []byte("private key"), 0o600))
	must(t, os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(dir, "link.txt")))
	spec := sandbox.Spec{Read: []string{dir}, Write: []string{dir}, Protect: []string{home}}

	t.Run("own-check", func(t *testing.T) {
		c, stderr := startFilesystemServer(t, spec, dir)
		if text, isErr := readTextFile(c, filepath.Join(dir, "hello.txt")); isErr || text != "hello from the allowed directory" {
			t.Fatalf("reading a file in DIR: %q (isError %v)\nstderr: %s", text, isErr, stderr)
		}
		for _, p := range []string{
			filepath.Join(outside, "secret.txt"),
			filepath.Join(dir, "link.txt"), // symlink out of DIR
			filepath.Join(home, ".ssh", "id_rsa"),
			filepath.Join(dir, "..", filepath.Base(outside), "secret.txt"),
		} {
			text, isErr := readTextFile(c, p)
			if !isErr || strings.Contains(text, "secret") && !strings.Contains(text, "denied") {
				t.Errorf("ESCAPE reading %s: %q", p, text)
			}
			t.Logf("%s: %s", p, firstLineOf(text))
		}
	})

	// The server is told that OUTSIDE and HOME are allowed too, so its own
	// check would pass: only the sandbox stands between it and the files.
	// Paths outside the grants do not exist in the sandbox's view, so the
	// server finds neither directory at start and every read fails without
	// a byte of the files.
	t.Run("sandbox-check", func(t *testing.T) {
		sshDir := filepath.Join(home, ".ssh")
		c, stderr := startFilesystemServer(t, spec, dir, outside, sshDir)
		if text, isErr := readTextFile(c, filepath.Join(dir, "hello.txt")); isErr {
			t.Fatalf("reading a file in DIR: %q\nstderr: %s", text, stderr)
		}
		for _, d := range []string{outside, sshDir} {
			if !strings.Contains(stderr.String(), "Cannot access directory "+d) {
				t.Errorf("the server saw %s (want it hidden by the sandbox); stderr:\n%s", d, stderr)
			}
		}
		for _, p := range []string{
			filepath.Join(outside, "secret.txt"),
			filepath.Join(dir, "link.txt"),
			filepath.Join(home, ".ssh", "id_rsa"),
		} {
			text, isErr := readTextFile(c, p)
			if !isErr || strings.Contains(text, "outside secret") || strings.Contains(text, "private key") {
				t.Errorf("ESCAPE reading %s: %q (isError %v)", p, text, isErr)
			}
			t.Logf("%s: %s", p, firstLineOf(text))
		}
	})
}

func firstLineOf(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return fmt.Sprintf("%.160s", l)
}
