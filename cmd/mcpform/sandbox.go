package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/policy"
	"github.com/mcpform/mcpform/runtime"
)

// confiner builds the sandbox hooks of one command run: plan and verify
// probe a sandboxed server in the same sandbox run starts it in, so that
// what is reviewed is what runs.
type confiner struct {
	io       *stdio
	lockPath string
	// audit is opened on first use: only a sandboxed server with network
	// access needs it (for its egress proxy's records).
	auditPath string
	audit     *runtime.AuditLog
}

func newConfiner(io *stdio, lockPath, auditPath string) *confiner {
	return &confiner{io: io, lockPath: lockPath, auditPath: auditPath}
}

// hook returns the Prepare hook for a server, or nil without a sandbox
// policy.
func (c *confiner) hook(name string, p *policy.Policy) (func(*exec.Cmd) (func(), error), error) {
	if p == nil || p.Sandbox == nil {
		return nil, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, fmt.Errorf("server %q has a sandbox policy, and the home directory is unknown: %w", name, err)
	}
	protect, err := c.protected()
	if err != nil {
		return nil, err
	}
	conf := runtime.Confinement{Name: name, Sandbox: p.Sandbox, Home: home, Protect: protect}
	if len(p.Sandbox.Network.Allow) > 0 {
		if c.audit == nil {
			if c.audit, err = runtime.OpenAudit(c.auditPath); err != nil {
				return nil, fmt.Errorf("server %q: its egress proxy needs the audit log: %w", name, err)
			}
		}
		conf.Egress = runtime.EgressAuditor(c.audit, runtime.SessionID(), name, func(err error) {
			fmt.Fprintf(c.io.err, "mcpform: audit: %s\n", escape.String(err.Error()))
		})
	}
	return runtime.SandboxHook(conf), nil
}

// protected lists what no sandbox write path may cover: mcp.lock and its
// directory, the state directory (audit log, taint state) and the mcpform
// binary. The home directory is protected by the sandbox itself.
func (c *confiner) protected() ([]string, error) {
	lockPath, err := filepath.Abs(c.lockPath)
	if err != nil {
		return nil, err
	}
	out := []string{lockPath, filepath.Dir(lockPath)}
	if c.auditPath != "" {
		out = append(out, c.auditPath, filepath.Dir(c.auditPath))
	}
	if exe, err := os.Executable(); err == nil {
		out = append(out, exe)
	}
	return out, nil
}

func (c *confiner) Close() {
	if c.audit != nil {
		c.audit.Close()
	}
}

// defaultAuditPath is the audit log's default location, or "" when the
// state directory is unknown.
func defaultAuditPath(io *stdio) string {
	p, err := runtime.DefaultAuditPath(io.getenv)
	if err != nil {
		return ""
	}
	return p
}
