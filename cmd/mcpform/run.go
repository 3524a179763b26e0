package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	goruntime "runtime"
	"time"

	"github.com/mcpform/mcpform/approval"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/mcp"
	"github.com/mcpform/mcpform/oauth"
	"github.com/mcpform/mcpform/pins"
	"github.com/mcpform/mcpform/runtime"
	"github.com/mcpform/mcpform/runtime/audit"
)

// oneProcessor runs the proxy's goroutines on one processor unless the
// user set GOMAXPROCS. A run is a sidecar, one per server per client, whose
// work is two goroutines handing messages on (the client's reader and the
// server's); with more processors the scheduler wakes and spins idle
// threads at every hand-over, CPU taken from the client and the server. On
// the 2-core reference machine one processor carried ~88k calls/s with 64
// in flight instead of ~74k, at the same latency (proxybench).
func oneProcessor() {
	if os.Getenv("GOMAXPROCS") == "" {
		goruntime.GOMAXPROCS(1)
	}
}

// spinOption is -spin as runtime.Options.Spin, where 0 means the default.
func spinOption(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}

// runFlags is mcpform run's command line.
type runFlags struct {
	lockPath       string
	auditPath      string
	explainSandbox bool
	spin           time.Duration
	trust          string
	name           string
}

func parseRunFlags(args []string, stderr io.Writer) (runFlags, error) {
	var f runFlags
	fs := newFlagSet("run", stderr, `Usage: mcpform run [-lock FILE] [-audit FILE] [-spin DURATION] [-explain-sandbox] NAME

Serve the locked server NAME on stdin/stdout: the enforcing proxy a client config launches.
`)
	fs.StringVar(&f.lockPath, "lock", lock.DefaultPath, "the mcp.lock to serve from (use an absolute path in client configs)")
	fs.StringVar(&f.auditPath, "audit", "", "the audit log (default $XDG_STATE_HOME/mcpform/audit.jsonl or ~/.local/state/mcpform/audit.jsonl)")
	fs.BoolVar(&f.explainSandbox, "explain-sandbox", false, "print the server's effective sandbox (paths, runtime base, destinations) and exit without starting it")
	registerTrust(fs, &f.trust)
	fs.DurationVar(&f.spin, "spin", runtime.DefaultSpin, "while messages flow, how long to poll for the next one before sleeping, at most 1ms (0: sleep at once: less CPU, more latency)")
	if err := parseArgs(fs, args); err != nil {
		return f, err
	}
	if f.spin > runtime.MaxSpin {
		fmt.Fprintf(stderr, "mcpform run: -spin %v is more than %v: a longer spin only burns CPU\n", f.spin, runtime.MaxSpin)
		return f, errors.New("-spin too long")
	}
	if fs.NArg() != 1 {
		return f, usageFailure(fs, stderr, "mcpform run takes one argument, a server name of the lock")
	}
	f.name = fs.Arg(0)
	return f, nil
}

// pinCache is where run remembers the digests of pinned files between
// starts, in mcpform's state directory ($XDG_STATE_HOME/mcpform/pins, or
// ~/.local/state/mcpform/pins), which the sandbox keeps from servers; nil,
// hashing on every start, when there is none.
func pinCache(getenv func(string) string) *pins.Cache {
	dir, err := stateDir(getenv)
	if err != nil {
		return nil
	}
	return pins.NewCache(filepath.Join(dir, "pins"))
}

// runRun is `mcpform run`. It reads only the lock: never mcp.hcl, never a
// command from the client's config.
func runRun(ctx context.Context, io *stdio, f runFlags) int {
	oneProcessor()
	file, lockData, err := lock.LoadBytes(f.lockPath)
	if err != nil {
		fmt.Fprintf(io.err, "mcpform run: %v\n", err)
		return exitError
	}
	// Approvals first: a lock the trust policy does not accept starts
	// nothing, and the client hears why for each request.
	var refuse error
	if r, err := lockApprovals(io, f.trust, f.lockPath, lockData); err != nil {
		refuse = err
	} else if refused(r) {
		refuse = approvalError(f.lockPath, r)
	} else if r.State == approval.Unverified {
		fmt.Fprintf(io.err, "mcpform run: warning: %s: %s\n", f.lockPath, r.Summary())
	}
	if refuse != nil {
		fmt.Fprintf(io.err, "mcpform run: %v\n", refuse)
	}
	entry, ok := lockedServer(io, "mcpform run", file, f.name, f.lockPath)
	if !ok {
		return exitError
	}
	var tokens mcp.OAuthHandler
	if r := entry.Remote; r != nil && r.Auth != nil && r.Auth.OAuth {
		store, client, err := oauthStore(io, r.URL)
		if err == nil {
			tokens, err = oauth.ForRun(f.name, r.URL, r.Auth.Issuers, store, client)
		}
		if err != nil {
			fmt.Fprintf(io.err, "mcpform run: %v\n", err)
			return exitError
		}
	}
	auditPath := f.auditPath
	if auditPath == "" {
		if auditPath, err = audit.DefaultPath(io.getenv); err != nil {
			fmt.Fprintf(io.err, "mcpform run: %v\n", err)
			return exitError
		}
	}
	dir, err := filepath.Abs(filepath.Dir(f.lockPath))
	if err != nil {
		fmt.Fprintf(io.err, "mcpform run: %v\n", err)
		return exitError
	}
	if f.explainSandbox {
		return explainSandbox(io, f.name, entry, f.lockPath, auditPath, dir)
	}
	// The server's pinned code (an npm or PyPI tree from mcpform's cache,
	// an image by its digest), as verify starts it too; a refusal is
	// told to the client for each request.
	if refuse == nil {
		if started, err := launchable(ctx, io.getenv, entry, dir); err != nil {
			refuse = err
		} else {
			entry = started
		}
	}
	warnUnsetEnv(io, []serverEnv{{f.name, entry.EnvPassthrough}}, "started")
	auditLog, err := audit.Open(auditPath)
	if err != nil {
		fmt.Fprintf(io.err, "mcpform run: %v\n", err)
		return exitError
	}
	defer auditLog.Close()
	// The server runs confined by its sandbox policy, if it has one; its
	// egress proxy records into the run's own audit log.
	confine := newConfiner(io, f.lockPath, auditPath)
	confine.audit = auditLog
	prepare, err := confine.hook(f.name, entry.Policy)
	if err != nil {
		fmt.Fprintf(io.err, "mcpform run: %v\n", err)
		return exitError
	}
	in, out := io.in, io.out
	// The real stdio, not a test's buffers: let the poller wait on it.
	if f, ok := in.(*os.File); ok && f == os.Stdin {
		in = runtime.Pollable(f)
	}
	if f, ok := out.(*os.File); ok && f == os.Stdout {
		out = runtime.Pollable(f)
	}
	err = runtime.Run(ctx, runtime.Options{
		Name:   f.name,
		Entry:  entry,
		Stdin:  in,
		Stdout: out,
		Stderr: io.err,
		Audit:  auditLog,
		// Relative commands resolve against the lock's directory, as
		// they did when plan probed them from mcp.hcl's.
		Dir:     dir,
		Prepare: prepare,
		// The taint gate goes on every entry: another server of the session may taint this one's sinks.
		Middlewares: []runtime.Middleware{runtime.TaintGateFor(entry, auditLog, io.getenv)},
		LookupEnv:   lookupEnv(io),
		Spin:        spinOption(f.spin),
		OAuth:       tokens,
		PinCache:    pinCache(io.getenv),
		Refuse:      refuse,
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(io.err, "mcpform run: %v\n", err)
		return exitError
	}
	return exitOK
}
