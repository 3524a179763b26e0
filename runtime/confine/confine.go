package confine

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mcpform/mcpform/policy"
	"github.com/mcpform/mcpform/runtime/audit"
	"github.com/mcpform/mcpform/runtime/egress"
	"github.com/mcpform/mcpform/runtime/sandbox"
)

// Options say how to start one server with a sandbox policy: the policy,
// the user's home (for "~/…" paths), the paths no write path may cover, and
// where egress connections are recorded.
type Options struct {
	Name    string
	Sandbox *policy.Sandbox
	Home    string
	// Protect lists mcp.lock, its directory, the audit log, the taint state
	// and the mcpform binary (sandbox.State.Protected); the home directory
	// is always protected.
	Protect []string
	// Egress receives every connection the server's egress proxy allowed
	// or refused. Required when the policy allows any network.
	Egress func(egress.Event)
}

// Hook returns the Prepare hook (for mcp.ServerSpec and runtime.Options)
// that starts the server confined, or nil when sb is nil. Each start gets a
// fresh private ${TMP} and, when network.allow lists anything, its own
// egress proxy on a unix socket in a private directory; the cleanup removes
// both. Without kernel support the hook fails and the server does not start.
func Hook(c Options) func(*exec.Cmd) (func(), error) {
	if c.Sandbox == nil {
		return nil
	}
	return func(cmd *exec.Cmd) (_ func(), err error) {
		if err := sandbox.Supported(); err != nil {
			return nil, fmt.Errorf("server %q has a sandbox policy and cannot be confined here, so it does not start: %w", c.Name, err)
		}
		var undo []func()
		undoAll := func() {
			for i := len(undo) - 1; i >= 0; i-- {
				undo[i]()
			}
		}
		defer func() {
			if err != nil {
				undoAll()
			}
		}()
		tmp, removeTmp, err := PrivateTmp(c.Sandbox)
		if err != nil {
			return nil, err
		}
		undo = append(undo, removeTmp)
		spec, err := sandbox.SpecFromPolicy(c.Sandbox, c.Home, tmp, c.Protect)
		if err != nil {
			return nil, fmt.Errorf("server %q: %w", c.Name, err)
		}
		if spec.Network {
			if c.Egress == nil {
				return nil, fmt.Errorf("server %q: its network allow-list needs an audit log for the egress proxy", c.Name)
			}
			dir, err := os.MkdirTemp("", "mcpform-egress-")
			if err != nil {
				return nil, fmt.Errorf("creating the egress socket's directory: %w", err)
			}
			undo = append(undo, func() { os.RemoveAll(dir) })
			spec.EgressSocket = filepath.Join(dir, "egress.sock")
			proxy, err := egress.New(c.Sandbox.Network.Allow, c.Egress)
			if err != nil {
				return nil, fmt.Errorf("server %q: %w", c.Name, err)
			}
			l, err := net.Listen("unix", spec.EgressSocket)
			if err != nil {
				return nil, fmt.Errorf("listening for the egress proxy: %w", err)
			}
			go proxy.Serve(l)
			undo = append(undo, func() { proxy.Close() })
		}
		cg, err := sandbox.NewCgroup(spec.Limits)
		if err != nil {
			return nil, fmt.Errorf("server %q: %w", c.Name, err)
		}
		if cg != nil {
			spec.Cgroup = cg
			undo = append(undo, func() { cg.Remove() })
		}
		if err := sandbox.Command(cmd, spec); err != nil {
			return nil, fmt.Errorf("server %q: %w", c.Name, err)
		}
		return undoAll, nil
	}
}

// EgressAuditor records egress connections in the audit log as "egress"
// events: the destination, whether it was allowed, the address dialled,
// bytes each way and duration. A record that cannot be written is reported
// on warn; the connection has already been decided by then.
func EgressAuditor(a *audit.Log, session, server string, warn func(error)) func(egress.Event) {
	return func(ev egress.Event) {
		outcome := "refused"
		if ev.Allowed {
			outcome = "allowed"
		}
		err := a.Write(&audit.Record{
			Session: session,
			Server:  server,
			Event:   "egress",
			Method:  ev.Method,
			Item:    net.JoinHostPort(ev.Host, strconv.Itoa(int(ev.Port))),
			Outcome: outcome,
			Detail: fmt.Sprintf("addr=%s up=%d down=%d duration=%s reason=%s",
				ev.Addr, ev.BytesUp, ev.BytesDown, ev.Duration.Round(1e6), ev.Reason),
		})
		if err != nil && warn != nil {
			warn(err)
		}
	}
}

// PrivateTmp creates a server's fresh private ${TMP}, with the directories
// its policy names under ${TMP} ("${TMP}/work"), which a fresh directory
// cannot otherwise hold. The returned func removes it all.
func PrivateTmp(sb *policy.Sandbox) (string, func(), error) {
	tmp, err := os.MkdirTemp("", "mcpform-tmp-")
	if err != nil {
		return "", nil, fmt.Errorf("creating the server's private temporary directory: %w", err)
	}
	remove := func() { os.RemoveAll(tmp) }
	for _, p := range append(append([]string{}, sb.Filesystem.Read...), sb.Filesystem.Write...) {
		if !strings.HasPrefix(p, policy.TmpVar+"/") || policy.CheckPath(p) != nil {
			continue
		}
		if err := os.MkdirAll(policy.ExpandPath(p, "", tmp), 0o700); err != nil {
			remove()
			return "", nil, fmt.Errorf("creating %s in the server's private temporary directory: %w", p, err)
		}
	}
	return tmp, remove, nil
}
