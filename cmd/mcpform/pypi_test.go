package main

import (
	"fmt"
	"os"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mcpform/mcpform/internal/pypitest"
)

// pythonCondition is the scripts' [python] condition: python3 with venv
// and pip 22.3 or later, which the PyPI scripts run. Without them the
// scripts skip, and under CI (CI=true) fail instead (see pypitest.Need).
func pythonCondition() (bool, error) {
	return pythonAt(pypitest.Missing())
}

// syspythonCondition is [syspython]: Debian's python3 (/usr/bin/python3)
// with venv and pip, which the sandboxed PyPI script runs.
func syspythonCondition() (bool, error) {
	return pythonAt(pypitest.MissingFor(pypitest.SystemPython))
}

func pythonAt(why string) (bool, error) {
	if why == "" {
		return true, nil
	}
	if os.Getenv("CI") == "true" {
		return false, fmt.Errorf("CI=true, so the test command (scripts/test.sh) should have installed python3 with venv and pip, but %s", why)
	}
	return false, nil
}

// cmdWheels writes the PyPI test packages' real wheels into a directory,
// for pip to find there (PIP_FIND_LINKS) as no index is reachable:
// `wheels DIR VERSION...` writes mcpform-hello-dep 1.0.0 and
// mcpform-hello-mcp at each VERSION; `wheels -rebuilt DIR` replaces
// mcpform-hello-dep 1.0.0 with another build of the same version.
func cmdWheels(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: wheels DIR VERSION... | wheels -rebuilt DIR")
	}
	if args[0] == "-rebuilt" {
		if len(args) != 2 {
			ts.Fatalf("usage: wheels -rebuilt DIR")
		}
		ts.Check(pypitest.DepWheel(ts.MkAbs(args[1]), pypitest.DepVersion, "another build"))
		return
	}
	ts.Check(pypitest.WriteWheels(ts.MkAbs(args[0]), args[1:]...))
}
