package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpform/mcpform/internal/imagetest"
	"github.com/mcpform/mcpform/lock"
)

// imageClient is what a client sends through run: the handshake, a list
// and a call.
const imageClient = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"x":1}}}
`

// imageDocker puts a fake docker first on PATH. A fake stands in for
// docker only because no container engine can run on the machines mcpform
// is tested on (docker there is a client with no daemon); the registry is
// real (internal/imagetest). The fake logs each argv it is started with
// and starts mcpform's fake MCP server in place of the container only
// when the image it is asked to run is IMAGE@<the digest in the want
// file>; anything else (the tag, another digest) exits 97.
func imageDocker(t *testing.T, dir string) (argvLog, want string) {
	t.Helper()
	fake, err := exec.LookPath("fakemcp")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin")
	argvLog, want = filepath.Join(dir, "docker-argv.log"), filepath.Join(dir, "docker-want")
	script := fmt.Sprintf(`#!/bin/sh
read -r want < %[1]q
printf '%%s\n' "$*" >> %[2]q
case " $* " in
*"@$want "*) ;;
*) echo "fake docker: the image is not the pinned digest $want: $*" >&2; exit 97 ;;
esac
exec %[3]q %[4]q
`, want, argvLog, fake, filepath.Join(dir, "surface.json"))
	writeFiles(t, dir, map[string]string{
		"bin/docker":   script,
		"surface.json": `{"answerCalls": true, "tools": [{"name": "echo", "description": "Echo.", "inputSchema": {"type": "object"}}]}`,
	})
	if err := os.Chmod(filepath.Join(bin, "docker"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("DOCKER_CONFIG", t.TempDir()) // no credentials of this machine's
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	return argvLog, want
}

// runImage runs mcpform run for server srv with the client's requests on
// stdin and returns its stdout, stderr and exit code.
func runImage(t *testing.T, dir string) (string, string, int) {
	t.Helper()
	cmd := exec.Command("mcpform", "run", "-lock", "mcp.lock", "-audit", "audit.jsonl", "srv")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	cmd.Stdin = strings.NewReader(imageClient)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

// TestRunImageByDigest: apply locks a container server's image by the
// digest its tag names on a real registry; run starts docker with the
// image as REPOSITORY@DIGEST and serves through it (verify starts it so
// too), and keeps starting
// that digest after the tag moved on the registry (plan shows the move as
// PKG-IMAGE-CHANGED); a plan whose image does not resolve fails and
// leaves mcp.lock byte-identical, and run still starts the locked digest
// with no registry at all; a locked command edited to run another image
// is refused, and so is a changed docker executable: neither starts.
func TestRunImageByDigest(t *testing.T) {
	reg := imagetest.Start(t)
	ref := reg.Host + "/acme/srv:1.2"
	first := imagetest.Push(t, ref)
	dir := t.TempDir()
	argvLog, _ := imageDocker(t, dir)
	setWant := func(d string) { writeFiles(t, dir, map[string]string{"docker-want": d + "\n"}) }
	setWant(first)
	writeFiles(t, dir, map[string]string{"mcp.hcl": fmt.Sprintf(`server "srv" {
  command = ["docker", "run", "-i", "--rm", "-e", "X=1", %q, "stdio"]
}
`, ref)})
	byDigest := "run -i --rm -e X=1 " + reg.Host + "/acme/srv@" + first + " stdio"

	mcpformIn(t, dir, 0, "apply", "-auto-approve")
	lockData, err := os.ReadFile(filepath.Join(dir, "mcp.lock"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`"image": {`, `"reference": "` + ref + `"`, `"digest": "` + first + `"`, `"` + ref + `",`} {
		if !bytes.Contains(lockData, []byte(w)) {
			t.Fatalf("the lock lacks %s:\n%s", w, lockData)
		}
	}

	// verify starts the server as run does: by the digest (the fake
	// refuses the tag).
	mcpformIn(t, dir, 0, "verify")
	logged := readLines(t, argvLog)
	if got := logged[len(logged)-1]; got != byDigest {
		t.Errorf("verify started docker %q, want %q", got, byDigest)
	}

	stdout, stderr, code := runImage(t, dir)
	if code != 0 || !strings.Contains(stdout, `"id":2,"result":{"tools":[{"name":"echo"`) || !strings.Contains(stdout, `"id":3,"result":{"content"`) {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	logged = readLines(t, argvLog)
	if got := logged[len(logged)-1]; got != byDigest {
		t.Errorf("run started docker %q, want %q", got, byDigest)
	}

	// The tag moves to another image: run still starts the locked
	// digest; plan shows the move.
	second := imagetest.Push(t, ref)
	before := len(readLines(t, argvLog))
	if stdout, stderr, code = runImage(t, dir); code != 0 || !strings.Contains(stdout, `"id":3,"result":{"content"`) {
		t.Fatalf("run after the re-tag: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if got := readLines(t, argvLog)[before:]; len(got) != 1 || got[0] != byDigest {
		t.Errorf("run after the re-tag started docker %q, want only %q", got, byDigest)
	}
	setWant(second)
	out := string(mcpformIn(t, dir, 2, "plan", "-detailed-exitcode"))
	if !strings.Contains(out, "PKG-IMAGE-CHANGED") || !strings.Contains(out, second) || !strings.Contains(out, first) {
		t.Errorf("plan after the re-tag does not show PKG-IMAGE-CHANGED %s -> %s:\n%s", first, second, out)
	}
	// Every plan format shows it, with both digests.
	for _, format := range []string{"-json", "-markdown", "-sarif"} {
		args := []string{"plan", "-detailed-exitcode", format}
		if format == "-sarif" {
			args = append(args, "plan.sarif")
		}
		out := string(mcpformIn(t, dir, 2, args...))
		if format == "-sarif" {
			data, err := os.ReadFile(filepath.Join(dir, "plan.sarif"))
			if err != nil {
				t.Fatal(err)
			}
			out = string(data)
		}
		if !strings.Contains(out, "PKG-IMAGE-CHANGED") || !strings.Contains(out, second) {
			t.Errorf("plan %s after the re-tag does not show PKG-IMAGE-CHANGED to %s:\n%s", format, second, out)
		}
	}

	// The registry is gone: plan and apply fail, saying why, and the lock
	// keeps its bytes.
	reg.Close()
	out, errOut := mcpformOut(t, dir, 1, "plan")
	if !strings.Contains(out+errOut, "mcpform cannot resolve the image "+ref) || !strings.Contains(out+errOut, "the lock is not changed") {
		t.Errorf("plan without the registry:\n%s\n%s", out, errOut)
	}
	mcpformOut(t, dir, 1, "apply", "-auto-approve")
	if after, _ := os.ReadFile(filepath.Join(dir, "mcp.lock")); !bytes.Equal(after, lockData) {
		t.Errorf("a failed resolution changed mcp.lock:\n%s", after)
	}

	// run resolves nothing: with the registry gone it starts the locked
	// digest as before.
	setWant(first)
	before = len(readLines(t, argvLog))
	if stdout, stderr, code = runImage(t, dir); code != 0 || !strings.Contains(stdout, `"id":3,"result":{"content"`) {
		t.Fatalf("run without the registry: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if got := readLines(t, argvLog)[before:]; len(got) != 1 || got[0] != byDigest {
		t.Errorf("run without the registry started docker %q, want %q", got, byDigest)
	}

	// The locked command edited to run another image than the record
	// pins: refused, and docker is not started. The lock's configDigest
	// refuses the edit on load; in a lock without one (another writer's)
	// run's own check of the image refuses it.
	edited := bytes.Replace(lockData, []byte(`"`+ref+`",`), []byte(`"`+reg.Host+`/evil/srv:1.2",`), 1)
	if bytes.Equal(edited, lockData) {
		t.Fatal("the edit changed nothing")
	}
	withoutDigest := regexp.MustCompile(`(?m)^\s*"configDigest": "sha256:[0-9a-f]{64}",?\n`).ReplaceAll(edited, nil)
	if bytes.Equal(withoutDigest, edited) {
		t.Fatal("the lock has no configDigest")
	}
	for _, tc := range []struct{ lock, want string }{
		{string(edited), `server "srv": its command, environment, remote, policy or mcpform settings do not match mcpform.configDigest`},
		{string(withoutDigest), "the locked command runs the image " + reg.Host + "/evil/srv:1.2, and the lock pins " + ref},
	} {
		writeFiles(t, dir, map[string]string{"mcp.lock": tc.lock})
		before = len(readLines(t, argvLog))
		stdout, stderr, code = runImage(t, dir)
		if code == 0 || !strings.Contains(stderr, tc.want) ||
			!strings.Contains(stderr, "run mcpform plan") || strings.Contains(stdout, `"result"`) {
			t.Errorf("run of an edited command: exit %d, want an error containing %q\n%s\n%s", code, tc.want, stdout, stderr)
		}
		if got := readLines(t, argvLog)[before:]; len(got) != 0 {
			t.Errorf("docker was started for a refused entry: %q", got)
		}
	}

	// The engine stays pinned like any command[0]: a changed docker is
	// refused before it starts.
	writeFiles(t, dir, map[string]string{"mcp.lock": string(lockData)})
	docker := filepath.Join(dir, "bin", "docker")
	data, err := os.ReadFile(docker)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(docker, append(data, "# another docker\n"...), 0o755); err != nil {
		t.Fatal(err)
	}
	before = len(readLines(t, argvLog))
	stdout, stderr, code = runImage(t, dir)
	if code == 0 || !strings.Contains(stderr, "the executable changed since it was locked") || strings.Contains(stdout, `"result"`) {
		t.Errorf("run with a changed docker: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if got := readLines(t, argvLog)[before:]; len(got) != 0 {
		t.Errorf("a changed docker was started: %q", got)
	}
}

func readLines(t *testing.T, p string) []string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// TestImageStart: the locked command with the image by the locked digest;
// an entry already rewritten is kept; a command that runs another image,
// or is no container run, or carries another digest, is refused.
func TestImageStart(t *testing.T) {
	const d = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	const other = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
	entry := func(command ...string) *lock.Entry {
		return &lock.Entry{Command: command, Mcpform: &lock.Settings{Image: &lock.Image{Reference: "ghcr.io/acme/srv:1.2", Digest: d}}}
	}
	for _, tt := range []struct {
		name    string
		command []string
		want    string // the argv started, or the error's text
	}{
		{"tag", []string{"docker", "run", "-i", "ghcr.io/acme/srv:1.2", "x"}, "docker run -i ghcr.io/acme/srv@" + d + " x"},
		{"already by digest", []string{"docker", "run", "-i", "ghcr.io/acme/srv@" + d, "x"}, "docker run -i ghcr.io/acme/srv@" + d + " x"},
		{"another image", []string{"docker", "run", "-i", "ghcr.io/evil/srv:1.2"}, "the locked command runs the image ghcr.io/evil/srv:1.2, and the lock pins ghcr.io/acme/srv:1.2"},
		{"another repository by the digest", []string{"docker", "run", "ghcr.io/evil/srv@" + d}, "the locked command runs the image ghcr.io/evil/srv@"},
		{"another digest", []string{"docker", "run", "ghcr.io/acme/srv@" + other}, "the locked command runs the image ghcr.io/acme/srv@" + other},
		{"not a container run", []string{"node", "srv.js"}, "the locked command is not a container run"},
		{"unknown flag", []string{"docker", "run", "--frob", "ghcr.io/acme/srv:1.2"}, "cannot start the pinned image"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := entry(tt.command...)
			got, err := imageStart(e)
			var s string
			if err != nil {
				s = err.Error()
				if !strings.Contains(s, "run mcpform plan") {
					t.Errorf("the error does not say to run mcpform plan: %s", s)
				}
			} else {
				s = strings.Join(got.Command, " ")
				if strings.Join(e.Command, " ") != strings.Join(tt.command, " ") {
					t.Errorf("imageStart changed the locked entry: %q", e.Command)
				}
			}
			if !strings.Contains(s, tt.want) {
				t.Errorf("imageStart(%q) = %s; want %s", tt.command, s, tt.want)
			}
		})
	}
}
