package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpform/mcpform/internal/npmtest"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/plan"
	"github.com/mcpform/mcpform/runtime/sandbox"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the test binary stand in for the commands the scripts run:
// "mcpform" itself and the test-only helpers registered in testCommands.
func TestMain(m *testing.M) {
	sandbox.MaybeRunStage()
	cmds := map[string]func(){
		"mcpform": func() {
			os.Exit(run(context.Background(), os.Args[1:], &stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr, getenv: os.Getenv, environ: os.Environ}))
		},
	}
	for name, f := range testCommands {
		cmds[name] = f
	}
	testscript.Main(m, cmds)
}

// update rewrites the files that the scripts' cmp commands compare with,
// from what the commands printed: go test -run TestScripts -update, then
// review the diff of testdata/script.
var update = flag.Bool("update", false, "rewrite the want files of testdata/script/*.txtar from the output")

// testCommands holds test-only commands (fake servers and the like), each
// registered from the file that defines it.
var testCommands = map[string]func(){}

// TestScripts runs the CLI's behaviour specifications in
// testdata/script/*.txtar. Names start with the subcommand they specify.
//
// Scripts reach the real servers through two variables: $NPM_BIN holds the
// pinned npm reference servers and the inspector (testdata/npm, installed by
// the test command), $NOTES is the Go SDK notes server, built once here.
// A script that needs $NPM_BIN starts with
//
//	[!npm] skip 'needs the npm reference servers (testdata/npm/node_modules) and node: run bash scripts/test.sh, which installs them'
//
// so that go test on a fresh clone passes; under CI (CI=true) the
// condition fails the script instead (see package npmtest).
func TestScripts(t *testing.T) {
	notes := notesServer(t)
	npmMissing := npmtest.Missing()
	if npmMissing != "" {
		t.Logf("scripts that need npm servers will skip: %s", npmMissing)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		UpdateScripts:       *update,
		Setup: func(e *testscript.Env) error {
			e.Setenv("NO_COLOR", "1")
			e.Setenv("NPM_BIN", npmtest.BinDir())
			e.Setenv("NOTES", notes)
			return nil
		},
		Condition: func(cond string) (bool, error) {
			if cond == "python" {
				return pythonCondition()
			}
			if cond == "syspython" {
				return syspythonCondition()
			}
			if cond == "ssh" {
				return sshCondition()
			}
			if cond != "npm" {
				return false, fmt.Errorf("unknown condition %q", cond)
			}
			if npmMissing != "" {
				return false, npmtest.InCI(npmMissing)
			}
			return true, nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":     cmdExits,
			"replace":   cmdReplace,
			"tamper":    cmdTamper,
			"forgeplan": cmdForgePlan,
			"wheels":    cmdWheels,
			"unpin":     cmdUnpin,
			"waitfor":   cmdWaitFor,
			"fakejudge": cmdFakeJudge,
		},
	})
}

// cmdExits runs a command and checks its exact exit code, which `exec` and
// `! exec` cannot tell apart: `exits 2 mcpform plan -detailed-exitcode`.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: %q is not an exit code", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exits: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with %d, want %d", args[1], got, want)
	}
}

// cmdWaitFor waits until a file exists, for a command started in the
// background to reach a state: `waitfor held`. It gives up after a minute.
func cmdWaitFor(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfor FILE")
	}
	path := ts.MkAbs(args[0])
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	ts.Fatalf("waitfor: %s did not appear within a minute", args[0])
}

// cmdReplace edits a file in place, as a user editing mcp.lock by hand
// would: `replace OLD NEW FILE` replaces the first OLD (which must be there).
func cmdReplace(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: replace OLD NEW FILE")
	}
	path := ts.MkAbs(args[2])
	data, err := os.ReadFile(path)
	ts.Check(err)
	if !strings.Contains(string(data), args[0]) {
		ts.Fatalf("replace: %s has no %q", args[2], args[0])
	}
	ts.Check(os.WriteFile(path, []byte(strings.Replace(string(data), args[0], args[1], 1)), 0o644))
}

// notesServer builds the Go SDK notes server.
func notesServer(t *testing.T) string {
	t.Helper()
	notes := filepath.Join(t.TempDir(), "notes")
	build := exec.Command("go", "build", "-o", notes, "../../examples/servers/notes")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the Go SDK notes server: %v\n%s", err, out)
	}
	return notes
}

// cmdTamper changes a file of every npm cache entry under a cache root, as
// malware or a careless edit would: `tamper ROOT RELPATH` appends to
// ROOT/*/tree/RELPATH (installed read-only: made writable first).
func cmdTamper(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: tamper ROOT RELPATH")
	}
	files, err := filepath.Glob(filepath.Join(ts.MkAbs(args[0]), "*", "tree", filepath.FromSlash(args[1])))
	ts.Check(err)
	if len(files) == 0 {
		ts.Fatalf("tamper: no %s in a cache entry under %s", args[1], args[0])
	}
	for _, f := range files {
		ts.Check(os.Chmod(f, 0o644))
		data, err := os.ReadFile(f)
		ts.Check(err)
		ts.Check(os.WriteFile(f, append(data, []byte("\n// tampered\n")...), 0o644))
	}
}

// sshCondition is [ssh]: ssh-keygen is installed. In CI a missing one
// fails the script: the test command installs openssh-client.
func sshCondition() (bool, error) {
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		if os.Getenv("CI") != "" {
			return false, errors.New("ssh-keygen is not installed; scripts/test.sh installs openssh-client")
		}
		return false, nil
	}
	return true, nil
}

// cmdForgePlan edits the lock inside a saved plan as someone who can
// write the plan file would, and recomputes every digest so that the plan
// still reads as a good one: `forgeplan PLANFILE` appends "--forged" to
// each server's command.
func cmdForgePlan(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: forgeplan PLANFILE")
	}
	path := ts.MkAbs(args[0])
	p, err := plan.ReadFile(path)
	ts.Check(err)
	lf, err := lock.Parse(p.PlannedLock)
	ts.Check(err)
	for _, e := range lf.Servers {
		e.Command = append(e.Command, "--forged")
		ts.Check(e.Seal())
	}
	p.PlannedLock, err = lock.Marshal(lf)
	ts.Check(err)
	ts.Check(plan.Save(path, p))
}
