package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcpform/mcpform/approval"
	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/onboard"
)

type clientConfigFlags struct {
	client  onboard.Client
	lock    string
	write   bool
	file    string
	mcpform string
	trust   string
	names   []string
}

func parseClientConfigFlags(args []string, stderr io.Writer) (clientConfigFlags, error) {
	var f clientConfigFlags
	var client string
	fs := newFlagSet("client-config", stderr, `Usage: mcpform client-config [-client NAME] [-lock FILE] [-write] [-file PATH] [-mcpform PATH] [-trust FILE] [NAME...]

Prints the client configuration that launches `+"`mcpform run -lock LOCK NAME`"+` for every locked
server (or the NAMEs), remote (url) ones too, with absolute paths, ready to paste. With -write
it updates the client's file instead: it shows the diff, keeps a backup and replaces only the
entries with the same names, keeping their env; every other key and server, comments, layout, a
byte order mark and CRLF line endings stay as they were. In a workspace's .vscode/mcp.json or
.cursor/mcp.json, a file teams commit, paths under the workspace are written
${workspaceFolder}/... and others under your home ${userHome}/..., which the editor expands.
The backup goes to $XDG_STATE_HOME/mcpform/backups (default ~/.local/state/mcpform/backups),
never beside the file. With -trust, each entry launches mcpform run -trust FILE, so the
client's servers start only from a lock the trust file's signers approved.

Usual files: claude ~/.config/Claude/claude_desktop_config.json (Linux) or
~/Library/Application Support/Claude/claude_desktop_config.json (macOS); claude-code ./.mcp.json;
vscode ./.vscode/mcp.json; cursor ./.cursor/mcp.json.
`)
	fs.StringVar(&client, "client", string(onboard.ClaudeDesktop), "the client: claude (Claude Desktop), claude-code, vscode or cursor")
	fs.StringVar(&f.lock, "lock", lock.DefaultPath, "the lock whose servers the client should launch")
	fs.BoolVar(&f.write, "write", false, "update the client's file in place (shows the diff, keeps a backup in mcpform's state directory)")
	fs.StringVar(&f.file, "file", "", "the client file -write updates (default: the client's usual file)")
	fs.StringVar(&f.mcpform, "mcpform", "", "the mcpform binary the client launches (default: this one)")
	fs.StringVar(&f.trust, "trust", "", "a trust file every launch passes to mcpform run (-trust): servers start only from an approved lock")
	if err := parseArgs(fs, args); err != nil {
		return f, err
	}
	c, err := onboard.ParseClient(client)
	if err != nil {
		fmt.Fprintf(stderr, "mcpform client-config: -client: %v\n", err)
		return f, err
	}
	f.client = c
	if f.file != "" && !f.write {
		fmt.Fprintln(stderr, "mcpform client-config: -file is the file -write updates; add -write")
		return f, errors.New("-file without -write")
	}
	f.names = fs.Args()
	return f, nil
}

func runClientConfig(_ context.Context, io *stdio, f clientConfigFlags) int {
	lf, names, err := loadServers(f.lock, f.names)
	if err != nil {
		return fail(io, err)
	}
	lockPath, err := filepath.Abs(f.lock)
	if err != nil {
		return fail(io, err)
	}
	bin, err := mcpformBinary(f.mcpform, io.err)
	if err != nil {
		return fail(io, err)
	}
	// A remote server is launched the same way: mcpform run proxies it.
	launches := onboard.Launches(bin, lockPath, names)
	if f.trust != "" {
		if launches, err = withTrust(io, launches, f.trust, lockPath); err != nil {
			return fail(io, err)
		}
	}
	need := map[string][]string{}
	for _, n := range names {
		need[n] = launchEnv(lf.Servers[n])
	}

	env := machineEnv(io)
	if !f.write {
		dst := onboard.DefaultFile(f.client, env)
		ws := onboard.Workspace(f.client, dst, env)
		launches = onboard.InWorkspace(launches, ws, env.Home)
		io.out.Write(onboard.Snippet(f.client, launches))
		if dst != "" {
			fmt.Fprintf(io.err, "Paste this into %s (or run with -write), then restart %s.\n", display(dst, env), f.client.Title())
		}
		noteWorkspace(io.err, f.client, ws, launches, env)
		noteEnv(io.err, f.client, onboard.Unpassed(f.client, nil, launches, need))
		return exitOK
	}

	file := f.file
	if file == "" {
		if file = onboard.DefaultFile(f.client, env); file == "" {
			fmt.Fprintf(io.err, "Error: cannot tell where %s keeps its configuration here: name the file with -file\n", f.client.Title())
			return exitError
		}
	}
	ws := onboard.Workspace(f.client, file, env)
	launches = onboard.InWorkspace(launches, ws, env.Home)
	current, err := os.ReadFile(file)
	exists := err == nil
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fail(io, err)
	}
	merged, err := onboard.Merge(f.client, current, launches)
	if err != nil {
		fmt.Fprintf(io.err, "Error: %s: %s\n", display(file, env), escape.Visible(err.Error()))
		return exitError
	}
	diff := onboard.Diff(display(file, env), display(file, env)+" (new)", current, merged)
	if diff == "" {
		fmt.Fprintf(io.err, "%s is up to date.\n", display(file, env))
		return exitOK
	}
	io.out.Write([]byte(diff))
	if exists {
		backup, err := keepBackup(file, current, io.getenv, time.Now())
		if err != nil {
			fmt.Fprintf(io.err, "Error: keeping a backup of %s: %v\n", display(file, env), err)
			return exitError
		}
		fmt.Fprintf(io.err, "Backup: %s\n", display(backup, env))
	} else if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return fail(io, err)
	}
	if err := writeFileAtomic(file, merged, 0o600); err != nil {
		fmt.Fprintf(io.err, "Error: writing %s: %v\n", display(file, env), err)
		return exitError
	}
	fmt.Fprintf(io.err, "Updated %s: %d server(s) now launch mcpform run. Restart %s to use them.\n", display(file, env), len(launches), f.client.Title())
	noteWorkspace(io.err, f.client, ws, launches, env)
	noteEnv(io.err, f.client, onboard.Unpassed(f.client, merged, launches, need))
	if others := onboard.Bypassing(f.client, merged); len(others) > 0 {
		quoted := make([]string, len(others))
		for i, o := range others {
			quoted[i] = escape.String(o)
		}
		fmt.Fprintf(io.err, "Note: %s still starts %s directly, past mcpform: remove %s from %s, or add %s to mcp.hcl, plan and apply.\n",
			f.client.Title(), strings.Join(quoted, ", "), pronoun(len(others)), display(file, env), pronoun(len(others)))
	}
	return exitOK
}

// launchEnv is the environment mcpform run needs from the client to run
// the locked server e: the variables its lock passes through to the
// server and, for a remote server locked with a bearer token, the variable
// holding the token, which mcpform run reads from its own environment.
func launchEnv(e *lock.Entry) []string {
	need := slices.Clone(e.EnvPassthrough)
	if e.Remote != nil && e.Remote.Auth != nil && e.Remote.Auth.BearerEnv != "" && !slices.Contains(need, e.Remote.Auth.BearerEnv) {
		need = append(need, e.Remote.Auth.BearerEnv)
	}
	return need
}

func pronoun(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// noteEnv says, in one line, which variables the client must pass that it
// would not: those the lock passes through, and a remote server's bearer
// token variable (launchEnv), that neither the client's start environment
// (PATH, HOME, …) nor the entry's env provides. Nothing when there are
// none.
func noteEnv(w io.Writer, c onboard.Client, needs []onboard.EnvNeed) {
	if len(needs) == 0 {
		return
	}
	var parts []string
	count := 0
	for _, n := range needs {
		names := make([]string, len(n.Names))
		for i, v := range n.Names {
			names[i] = escape.String(v)
		}
		count += len(names)
		parts = append(parts, andList(names)+" for "+escape.String(n.Server))
	}
	where := "the entry's env"
	if len(needs) > 1 {
		where = "the entries' env"
	}
	also := ""
	if c.InheritsEnvironment() {
		also = fmt.Sprintf(", or set %s where %s starts", pronoun(count), c.Title())
	}
	fmt.Fprintf(w, "Note: %s must pass mcpform %s: add %s to %s%s.\n", c.Title(), andList(parts), pronoun(count), where, also)
}

// andList joins "a", "a and b", "a, b and c".
func andList(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

// noteWorkspace says, for a workspace's file, how its paths were written,
// when any was.
func noteWorkspace(w io.Writer, c onboard.Client, ws string, launches []onboard.Launch, env onboard.Env) {
	rewritten := false
	for _, l := range launches {
		for _, a := range append([]string{l.Command}, l.Args...) {
			if strings.HasPrefix(a, onboard.WorkspaceFolder) || strings.HasPrefix(a, onboard.UserHome) {
				rewritten = true
			}
		}
	}
	if ws == "" || !rewritten {
		return
	}
	d := display(ws, env)
	if abs, err := filepath.Abs(ws); err == nil && abs == env.Dir {
		d = "this directory"
	}
	fmt.Fprintf(w, "Note: paths under the workspace folder (%s) are written %s/..., and others under your home %s/..., which %s expands on each machine.\n",
		d, onboard.WorkspaceFolder, onboard.UserHome, c.Title())
}

// backupDir is where client-config -write keeps the client files it
// replaced: in mcpform's state directory beside the audit log
// ($XDG_STATE_HOME/mcpform/backups, or ~/.local/state/mcpform/backups),
// not beside the file. A backup beside .vscode/mcp.json is in the
// workspace: the editor may read it and a team may commit it, with
// whatever secrets its env blocks held.
func backupDir(getenv func(string) string) (string, error) {
	d, err := stateDir(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "backups"), nil
}

// stateDir is mcpform's state directory: $XDG_STATE_HOME/mcpform, or
// ~/.local/state/mcpform.
func stateDir(getenv func(string) string) (string, error) {
	if d := getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "mcpform"), nil
	}
	home := getenv("HOME")
	if home == "" {
		home = getenv("USERPROFILE")
	}
	if home == "" {
		return "", errors.New("no state directory for it: set XDG_STATE_HOME or HOME")
	}
	return filepath.Join(home, ".local", "state", "mcpform"), nil
}

// backupName names the backup of the client file at abs by that path and
// the time: /home/alice/proj/.vscode/mcp.json at t becomes
// home-alice-proj-.vscode-mcp.json.bak-20260102T150405.000Z.
func backupName(abs string, t time.Time) string {
	p := filepath.ToSlash(abs)
	if v := filepath.VolumeName(abs); v != "" {
		p = strings.TrimSuffix(v, ":") + p[len(v):]
	}
	p = strings.Trim(p, "/")
	p = strings.Map(func(r rune) rune {
		if r == '/' || r == ':' || r == '\\' {
			return '-'
		}
		return r
	}, p)
	return p + ".bak-" + t.UTC().Format("20060102T150405.000Z")
}

// keepBackup writes data, the client file's content before -write, to the
// backup directory and returns the backup's path. The client file may hold
// secrets in env blocks: the directory is private (0700) and the backup
// gets the file's own permissions, at most 0600. It never replaces a file.
func keepBackup(file string, data []byte, getenv func(string) string, now time.Time) (string, error) {
	dir, err := backupDir(getenv)
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	mode := os.FileMode(0o600)
	if st, err := os.Stat(file); err == nil {
		mode = st.Mode().Perm() & 0o600
	}
	name := filepath.Join(dir, backupName(abs, now))
	for i := 1; ; i++ {
		out, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, os.ErrExist) && i < 100 {
			name = filepath.Join(dir, fmt.Sprintf("%s.%d", backupName(abs, now), i))
			continue
		}
		if err != nil {
			return "", err
		}
		if _, err := out.Write(data); err != nil {
			out.Close()
			return "", err
		}
		return name, out.Close()
	}
}

// mcpformBinary is the absolute path of the mcpform the client should
// launch: the -mcpform flag, else this binary, except when this binary is a
// temporary `go run` build that disappears when it exits; then the mcpform
// on PATH.
func mcpformBinary(flagValue string, stderr io.Writer) (string, error) {
	if flagValue != "" {
		return filepath.Abs(flagValue)
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding the mcpform binary: %w (name it with -mcpform)", err)
	}
	if p, err := filepath.EvalSymlinks(exe); err == nil {
		exe = p
	}
	if strings.Contains(exe, string(filepath.Separator)+"go-build") {
		if p, err := exec.LookPath("mcpform"); err == nil {
			if abs, err := filepath.Abs(p); err == nil {
				fmt.Fprintf(stderr, "Note: this mcpform is a temporary `go run` build; the configuration launches %s from PATH instead.\n", abs)
				return abs, nil
			}
		}
		fmt.Fprintf(stderr, "Warning: this mcpform is a temporary `go run` build that disappears when it exits: install mcpform (in a clone of the repository: go install ./cmd/mcpform) and run client-config again, or name the binary with -mcpform.\n")
	}
	return exe, nil
}

// withTrust adds -trust FILE to each launch's mcpform run, after checking
// that the trust file loads: a client must not be handed a launch that
// refuses every start for a typo.
func withTrust(io *stdio, ls []onboard.Launch, trust, lockPath string) ([]onboard.Launch, error) {
	abs, err := filepath.Abs(trust)
	if err != nil {
		return nil, err
	}
	if _, err := approval.LoadPolicy(abs); err != nil {
		return nil, err
	}
	if rel, err := filepath.Rel(filepath.Dir(lockPath), abs); err == nil && filepath.IsLocal(rel) {
		fmt.Fprintf(io.err, "Warning: the trust file %s is beside the lock: whoever can change the lock can change who may approve it. Keep it where you or your organisation control it (~/.config/mcpform/trust.hcl, /etc/mcpform/trust.hcl).\n", escape.String(abs))
	}
	out := make([]onboard.Launch, len(ls))
	for i, l := range ls {
		l.Args = append([]string{l.Args[0], "-trust", abs}, l.Args[1:]...)
		out[i] = l
	}
	return out, nil
}
