package main

import (
	"fmt"
	"os/exec"

	"github.com/mcpform/mcpform/policy"
)

// sandboxHook returns the hook that starts a server in its sandbox, or nil
// for a server without a sandbox policy.
func sandboxHook(name string, p *policy.Policy, lockPath string) (func(*exec.Cmd) (func(), error), error) {
	if p == nil || p.Sandbox == nil {
		return nil, nil
	}
	return nil, fmt.Errorf("server %q has a sandbox policy, and this build cannot enforce sandboxes yet; it does not start", name)
}
