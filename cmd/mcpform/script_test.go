package main

import (
	"context"
	"os"
	"testing"

	"github.com/mcpform/mcpform/runtime/sandbox"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the test binary stand in for the commands the scripts run:
// "mcpform" itself and the test-only helpers registered in testCommands.
func TestMain(m *testing.M) {
	sandbox.MaybeRunStage()
	cmds := map[string]func(){
		"mcpform": func() {
			os.Exit(run(context.Background(), os.Args[1:], &stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr, getenv: os.Getenv}))
		},
	}
	for name, f := range testCommands {
		cmds[name] = f
	}
	testscript.Main(m, cmds)
}

// testCommands holds test-only commands (fake servers and the like), each
// registered from the file that defines it.
var testCommands = map[string]func(){}

// TestScripts runs the CLI's behaviour specifications in
// testdata/script/*.txtar. Names start with the subcommand they specify.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: false,
		Setup: func(e *testscript.Env) error {
			e.Setenv("NO_COLOR", "1")
			return nil
		},
	})
}
