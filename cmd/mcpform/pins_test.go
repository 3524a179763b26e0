package main

import (
	"github.com/mcpform/mcpform/lock"
	"github.com/rogpeppe/go-internal/testscript"
)

// cmdUnpin rewrites a lock without its pins, as mcpform wrote locks before
// it pinned files: `unpin mcp.lock`. The control runs of the pin scripts
// use it.
func cmdUnpin(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: unpin LOCK")
	}
	path := ts.MkAbs(args[0])
	f, err := lock.Load(path)
	ts.Check(err)
	for _, e := range f.Servers {
		if e.Mcpform != nil {
			e.Mcpform.Pins = nil
		}
	}
	ts.Check(lock.Save(path, f))
}
