package plan

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/lang"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/mcp"
	"github.com/mcpform/mcpform/pins"
	"github.com/mcpform/mcpform/policy"
)

// Options are the inputs of Make that do not come from mcp.hcl or the lock.
type Options struct {
	// Targets limits the plan to these servers (lock names or addresses);
	// empty means every server.
	Targets     []string
	Parallelism int
	Progress    Progress
	// Probing, when set, hears how many servers are about to be probed,
	// before the first begins (a progress report's total).
	Probing func(n int)
	// OnPhase, when set, hears of each server's probe phases
	// (Target.OnPhase), from the probing goroutines, possibly at once.
	OnPhase func(name string, p mcp.Phase)
	// Prepare returns the hook that starts a server in its sandbox, or nil
	// for a server without a sandbox policy. An error means the server
	// cannot be started as run would start it.
	Prepare   func(name string, p *policy.Policy) (func(*exec.Cmd) (func(), error), error)
	LookupEnv func(string) (string, bool)
	// OAuth returns the handler of a remote server declared with
	// auth { oauth = true }, its tokens, after filling in r.Auth what the
	// lock pins of its authorization (Resource, Issuers). Its error (no
	// login yet, for one) is the server's.
	OAuth func(ctx context.Context, name string, r *lock.Remote) (mcp.OAuthHandler, error)
	// NPMCache is the root of mcpform's npm cache: an npm runner's server
	// is probed from its pinned tree, installed there (pins/npm), as run
	// starts it. A plan without one cannot plan npm servers.
	NPMCache string
	// PyPICache is the root of mcpform's PyPI cache, where a PyPI
	// runner's server is installed (pins/pypi) and probed from. A plan
	// without one cannot plan PyPI servers.
	PyPICache string
}

// Make probes every server of cfg and diffs configuration and live surfaces
// against the lock. locked is nil and lockBytes empty when there is no lock
// yet. Make never writes anything; a server that cannot be probed is
// reported in its ServerPlan.
func Make(ctx context.Context, cfg *lang.Config, locked *lock.File, lockBytes []byte, opts Options) (*Plan, error) {
	if locked == nil {
		locked = &lock.File{Servers: map[string]*lock.Entry{}}
	}
	selected := func(name, addr string) bool {
		return len(opts.Targets) == 0 || slices.Contains(opts.Targets, name) || slices.Contains(opts.Targets, addr)
	}
	for _, t := range opts.Targets {
		if !targetExists(t, cfg, locked) {
			return nil, fmt.Errorf("-target %q names no server of the configuration or the lock", t)
		}
	}
	p := &Plan{FormatVersion: FormatVersion, ConfigDigest: ConfigDigest(cfg), LockDigest: LockDigest(lockBytes), LockPath: cfg.Lockfile}

	var targets []Target
	byName := map[string]*ServerPlan{}
	remotes := map[string]*lock.Remote{}    // what each entry pins of its remote server
	pinned := map[string]pinResult{}        // the files each command server starts
	npmPinned := map[string]npmResult{}     // the npm tree of each npm runner's server
	imagePinned := map[string]imageResult{} // the image of each container server
	pypiPinned := map[string]pypiResult{}   // the PyPI tree of each PyPI runner's server
	var rejectedMu sync.Mutex
	rejected := map[string][]string{} // notes of the tools each probe left out
	for _, s := range cfg.Servers {
		if !selected(s.Name, s.Addr) {
			continue
		}
		// probed is the argv the probe starts, and pol the policy it
		// starts under: the declared ones, but for a server whose pinned
		// code mcpform starts itself.
		probed, pol := s.Command, &s.Policy
		_, inLock := locked.Servers[s.Name]
		sp := &ServerPlan{Name: s.Name, Addr: s.Addr, Version: s.Version, New: !inLock}
		byName[s.Name] = sp
		p.Servers = append(p.Servers, sp)
		era, err := mcp.ParseEra(s.Protocol)
		if err != nil {
			sp.Error = err.Error()
			continue
		}
		if s.URL == "" {
			if err := checkExactNPM(s); err != nil {
				sp.Error = err.Error()
				continue
			}
			// An npm runner's server is pinned by its whole tree and
			// probed from it in mcpform's cache: node is the executable
			// pinned (docs/LOCKFILE.md, "npm trees").
			command := s.Command
			nr, isNPM := planNPMServer(ctx, s, locked.Servers[s.Name], filepath.Dir(cfg.Lockfile), opts.NPMCache, opts.LookupEnv)
			if isNPM {
				if nr.err != nil {
					sp.Error = nr.err.Error()
					continue
				}
				npmPinned[s.Name] = nr
				command, probed = []string{"node"}, nr.argv
				pol = pol.WithRead(nr.entry)
			}
			// A container server is pinned by its image's digest and probed
			// by it; the engine stays the executable pinned
			// (docs/LOCKFILE.md, "Container images").
			if ir, ok := planImage(ctx, s.Name, s.Command, locked.Servers[s.Name]); ok {
				if ir.err != nil {
					sp.Error = ir.err.Error()
					continue
				}
				imagePinned[s.Name] = ir
				probed = ir.argv
			}
			// A PyPI runner's server is pinned by its whole tree and probed
			// from it in mcpform's cache: the venv's python is the
			// executable pinned (docs/LOCKFILE.md, "PyPI trees").
			if pr, ok := planPyPIServer(ctx, s, locked.Servers[s.Name], filepath.Dir(cfg.Lockfile), opts.PyPICache); ok {
				if pr.err != nil {
					sp.Error = pr.err.Error()
					continue
				}
				pypiPinned[s.Name] = pr
				command, probed = pr.argv, pr.argv
				for _, d := range pr.reads {
					pol = pol.WithRead(d)
				}
			}
			// Before the probe: a file swapped while the probe runs is
			// then not the one locked, and run refuses it.
			p, err := pins.Compute(command, cfg.Dir, filepath.Dir(cfg.Lockfile))
			pinned[s.Name] = pinResult{p, err}
		}
		t := Target{Name: s.Name, Command: probed, Env: s.Env, Remote: remoteOf(s), Dir: cfg.Dir, Era: era,
			ClientCapabilities: s.ClientCapabilities, Timeout: s.Timeout, LookupEnv: opts.LookupEnv,
			Samples: samplesOf(s), SampleLock: locked.Servers[s.Name]}
		if t.Remote != nil && t.Remote.Auth != nil && t.Remote.Auth.OAuth {
			if opts.OAuth == nil {
				sp.Error = "auth { oauth = true }: this plan has no OAuth tokens to probe the server with"
				continue
			}
			if t.OAuth, err = opts.OAuth(ctx, s.Name, t.Remote); err != nil {
				sp.Error = err.Error()
				continue
			}
		}
		remotes[s.Name] = t.Remote
		if t.Remote != nil {
			name := s.Name
			t.OnReject = func(tool string, why error) {
				rejectedMu.Lock()
				defer rejectedMu.Unlock()
				rejected[name] = append(rejected[name], fmt.Sprintf("server %q: tool %q is left out of the lock, as the HTTP transport says a client must leave out a tool whose x-mcp-header is invalid: %v", name, escape.String(tool), why))
			}
		}
		if old, ok := locked.Servers[s.Name]; ok && era == mcp.EraAuto {
			t.Locked = old
		}
		if opts.OnPhase != nil {
			name := s.Name
			t.OnPhase = func(p mcp.Phase) { opts.OnPhase(name, p) }
		}
		if opts.Prepare != nil {
			pol := *pol
			if t.Prepare, err = opts.Prepare(s.Name, &pol); err != nil {
				sp.Error = err.Error()
				continue
			}
		} else if s.Policy.Sandbox != nil {
			sp.Error = "the server has a sandbox policy and no sandbox is available to probe it in"
			continue
		}
		targets = append(targets, t)
	}
	if opts.Probing != nil {
		opts.Probing(len(targets))
	}
	results := ProbeAll(ctx, targets, opts.Parallelism, opts.Progress)
	jury := newTextJudge(ctx, cfg.Judges, opts.LookupEnv)
	for _, t := range targets {
		p.Notes = append(p.Notes, rejected[t.Name]...)
	}
	declared := map[string]*lang.Server{}
	for _, s := range cfg.Servers {
		declared[s.Name] = s
	}
	var probed []string
	for _, r := range results {
		if r.Err == nil {
			probed = append(probed, r.Name)
		}
	}
	for _, r := range results {
		sp := byName[r.Name]
		if r.Err != nil {
			sp.Error = r.Err.Error()
			if errors.Is(r.Err, exec.ErrNotFound) {
				sp.Error += notFoundHint(declared[r.Name], probed)
			}
			// A start failure carries its own hint, from the names
			// the server actually got.
			if se := (*mcp.StartError)(nil); !errors.As(r.Err, &se) {
				sp.Error += envHint(declared[r.Name])
			}
			continue
		}
		if pr := pinned[r.Name]; pr.err != nil {
			// The probe started it, and mcpform cannot say which file it
			// ran: run could not check it either.
			sp.Error = fmt.Sprintf("the server answered, and mcpform cannot pin the file its command starts (%v): fix the command in mcp.hcl", pr.err)
			continue
		}
		planServer(sp, declared[r.Name], remotes[r.Name], locked.Servers[r.Name], r.Entry, pinned[r.Name].pins, jury, r.Samples...)
		if nr, ok := npmPinned[r.Name]; ok && sp.Entry != nil {
			recordNPM(p, sp, nr, locked.Servers[r.Name])
		}
		if ir, ok := imagePinned[r.Name]; ok && sp.Entry != nil {
			recordImage(p, sp, ir, locked.Servers[r.Name])
		}
		if pr, ok := pypiPinned[r.Name]; ok && sp.Entry != nil {
			recordPyPI(p, sp, pr, locked.Servers[r.Name])
		}
		recordSamples(p, sp, r.Samples)
	}
	for name, e := range locked.Servers {
		if _, ok := declared[name]; ok || !selected(name, ServerAddr(name)) {
			continue
		}
		sp := &ServerPlan{Name: name, Addr: ServerAddr(name), Action: Delete}
		field, before := "command", mustJSON(e.Command)
		if e.Remote != nil {
			field, before = "url", mustJSON(e.Remote.URL)
		}
		sp.Changes = []Change{{Addr: sp.Addr + "." + field, Action: Delete, Class: Config, Grade: None, Rule: "CFG-SERVER-REMOVED",
			Before: before, Detail: "removed from mcp.hcl; apply deletes its entry"}}
		if e.Mcpform != nil {
			sp.LockedVersion = e.Mcpform.Version
		}
		p.Servers = append(p.Servers, sp)
	}
	sort.Slice(p.Servers, func(i, j int) bool { return p.Servers[i].Name < p.Servers[j].Name })
	for _, sp := range p.Servers {
		p.RequiredBump = max(p.RequiredBump, sp.RequiredBump)
		if sp.Action != Delete {
			sp.SuggestedVersion = SuggestVersion(sp.LockedVersion, sp.RequiredBump)
		}
	}
	return p, nil
}

// notFoundHint is added to the failed probe of a server whose program
// (command[0]) is not on mcpform's PATH: what to install, or to remove the
// server, or to plan the servers that were probed without it, as a command
// to paste.
func notFoundHint(s *lang.Server, probed []string) string {
	if s == nil || len(s.Command) == 0 {
		return ""
	}
	prog := s.Command[0]
	var b strings.Builder
	fmt.Fprintf(&b, "\nhint: %s is not installed where mcpform runs (it is not on mcpform's PATH). To fix it, %s; or remove the server %q block from mcp.hcl",
		strconv.Quote(prog), lang.InstallAdvice(prog), s.Name)
	if len(probed) == 0 {
		b.WriteString(".")
		return b.String()
	}
	b.WriteString("; or plan the servers that were probed without it:\n    mcpform plan")
	for _, n := range probed {
		b.WriteString(" -target ")
		b.WriteString(n) // a lock name: identifiers joined with dots, safe for a shell
	}
	return b.String()
}

// envHint is added to a failed probe of a server that passes no PATH: the
// most common reason a server started through "#!/usr/bin/env node", npx or
// uvx fails is that it sees only the variables named in env.
func envHint(s *lang.Server) string {
	if s == nil || s.URL != "" || slices.Contains(s.Env, "PATH") {
		return ""
	}
	return "\nThe server sees only the environment variables named in its env list, and PATH is not one: " +
		"a server started through npx, uvx or a \"#!/usr/bin/env\" script usually needs env = [\"PATH\"] (and often \"HOME\")."
}

// planServer fills sp for a probed server: the entry apply would write, and
// every change against the locked entry (nil for a new server).
func planServer(sp *ServerPlan, s *lang.Server, remote *lock.Remote, old, live *lock.Entry, filePins *lock.Pins, jury *textJudge, samples ...SampleResult) {
	if live.Remote != nil && remote != nil {
		// The transport the probe spoke (the HTTP+SSE fallback, or
		// not), which run then speaks and no other.
		r := *remote
		r.Transport = live.Remote.Transport
		remote = &r
	}
	live.Command, live.EnvPassthrough, live.Remote = nil, nil, remote
	if live.Remote == nil {
		live.Command = s.Command
		live.EnvPassthrough = append([]string{}, s.Env...)
	}
	live.Mcpform = settingsOf(s)
	if live.Remote == nil {
		live.Mcpform.Pins = keepMoved(filePins, oldPins(old))
	}
	pol := s.Policy
	if !pol.IsEmpty() {
		live.Policy = &pol
	}
	sp.Entry = live

	base := old
	if old == nil {
		sp.Action = Create
		field, after := "command", mustJSON(s.Command)
		if live.Remote != nil {
			field, after = "url", mustJSON(live.Remote.URL)
		}
		sp.Changes = append(sp.Changes, Change{Addr: sp.Addr + "." + field, Action: Create, Class: Config, Grade: None, Rule: "CFG-SERVER-ADDED",
			After: after, Detail: "new in mcp.hcl; apply locks its surface"})
		base = emptyEntry(live)
		// A new server's pins are written with it (mcpform show lists
		// them), not listed as changes of their own: the whole server is
		// new, and run checks them from the first start.
	} else {
		sp.Changes = append(sp.Changes, configChanges(sp.Addr, old, live)...)
		sp.Changes = append(sp.Changes, pinChanges(sp.Addr, oldPins(old), live.Mcpform.Pins)...)
		if old.Mcpform != nil {
			sp.LockedVersion = old.Mcpform.Version
		}
	}
	surface, unchanged := DiffSurface(sp.Addr, base, live)
	jury.judge(surface) // before the grades are summed and gated
	// What the sample calls' results show, graded as surface changes: a
	// result's shape is the tool's contract too (samples.go).
	surface = append(surface, SampleChanges(sp.Addr, old, samples)...)
	sp.Changes = append(sp.Changes, surface...)
	sp.Unchanged = unchanged
	if old != nil && len(sp.Changes) > 0 {
		sp.Action = Update
	}
	for _, c := range surface {
		if c.Class == Definitional {
			sp.RequiredBump = max(sp.RequiredBump, c.Grade)
		}
	}
	if err := checkTaintLabels(s, old, live); err != nil {
		sp.Error = err.Error()
	}
	if err := checkExpose(s, old, live); err != nil && sp.Error == "" {
		sp.Error = err.Error()
	}
	if old != nil {
		if err := CheckVersionBump(sp.LockedVersion, s.Version, sp.RequiredBump); err != nil {
			sp.VersionError = err.Error()
		}
		sp.VersionError = joinErr(sp.VersionError, toolVersionErrors(sp, s, old))
	}
	sp.VersionError = joinErr(sp.VersionError, unknownVersionedTools(s, live))
}

// emptyEntry is a sealed entry with nothing in it, in live's era, so that a
// new server's surface diffs as items created.
func emptyEntry(live *lock.Entry) *lock.Entry {
	e := &lock.Entry{ProtocolVersion: live.ProtocolVersion, SupportedVersions: live.SupportedVersions,
		ServerInfo: live.ServerInfo, Capabilities: live.Capabilities, Instructions: nil}
	if err := e.Seal(); err != nil {
		panic(fmt.Sprintf("plan: sealing an empty entry: %v", err))
	}
	return e
}

// settingsOf collects the mcpform-only settings of a server.
func settingsOf(s *lang.Server) *lock.Settings {
	st := &lock.Settings{Version: s.Version, ClientCapabilities: s.ClientCapabilities}
	if s.Protocol != "" && s.Protocol != "auto" {
		st.Protocol = s.Protocol
	}
	if s.Timeout > 0 && s.Timeout != mcp.DefaultTimeout {
		st.Timeout = s.Timeout.String()
	}
	for tool, v := range s.ToolVersions {
		if st.Tools == nil {
			st.Tools = map[string]lock.ToolSettings{}
		}
		st.Tools[tool] = lock.ToolSettings{Version: v}
	}
	return st
}

// remoteOf is what the lock pins of a remote server declared in mcp.hcl;
// nil for a command server.
func remoteOf(s *lang.Server) *lock.Remote {
	if s.URL == "" {
		return nil
	}
	r := &lock.Remote{URL: s.URL, Transport: lock.TransportStreamableHTTP, Headers: s.Headers}
	if a := s.Auth; a != nil {
		r.Auth = &lock.RemoteAuth{OAuth: a.OAuth, Scopes: a.Scopes, BearerEnv: a.BearerEnv}
	}
	return r
}

// configChanges compares what mcp.hcl declares with what the lock holds.
func configChanges(addr string, old, live *lock.Entry) []Change {
	var out []Change
	add := func(rule, field string, before, after any) {
		b, a := mustJSON(before), mustJSON(after)
		if string(b) != string(a) {
			out = append(out, Change{Addr: addr + "." + field, Action: Update, Class: Config, Grade: None, Rule: rule, Before: b, After: a})
		}
	}
	or, lr := old.Remote, live.Remote
	if or == nil {
		or = &lock.Remote{}
	}
	if lr == nil {
		lr = &lock.Remote{}
	}
	if old.Remote == nil || live.Remote == nil {
		add("CFG-COMMAND-CHANGED", "command", old.Command, live.Command)
		add("CFG-ENV-CHANGED", "env", nonNil(old.EnvPassthrough), nonNil(live.EnvPassthrough))
	}
	add("CFG-URL-CHANGED", "url", or.URL, lr.URL)
	if old.Remote != nil && live.Remote != nil {
		add("REMOTE-TRANSPORT-CHANGED", "transport", or.Transport, lr.Transport)
	}
	add("CFG-HEADERS-CHANGED", "headers", or.Headers, lr.Headers)
	add("CFG-AUTH-CHANGED", "auth", or.Auth.Configured(), lr.Auth.Configured())
	os, ls := settingsOrEmpty(old.Mcpform), settingsOrEmpty(live.Mcpform)
	add("CFG-PROTOCOL-CHANGED", "protocol", protocolName(os.Protocol), protocolName(ls.Protocol))
	add("CFG-VERSION-CHANGED", "version", os.Version, ls.Version)
	add("CFG-VERSION-CHANGED", "tool_versions", os.Tools, ls.Tools)
	add("CFG-CLIENT-CAPABILITIES-CHANGED", "client_capabilities", rawOrEmpty(os.ClientCapabilities), rawOrEmpty(ls.ClientCapabilities))
	add("CFG-POLICY-CHANGED", "policy", old.Policy.Normalized(), live.Policy.Normalized())
	return weakenedPolicy(out, old, live) // ondrift.go
}

// checkTaintLabels refuses a taint label that names no tool: not in the
// live surface and not in the lock either (a typo). Labels for tools that
// were locked but are gone are dropped by apply, which says so.
func checkTaintLabels(s *lang.Server, old, live *lock.Entry) error {
	isTool := func(name string) bool {
		if _, ok := live.Find(lock.Tools, name); ok {
			return true
		}
		if old != nil {
			_, ok := old.Find(lock.Tools, name)
			return ok
		}
		return false
	}
	var missing string
	if err := s.Policy.Taint.Check(func(name string) bool {
		ok := isTool(name)
		if !ok {
			missing = name
		}
		return ok
	}); err != nil {
		return fmt.Errorf("%w: the server lists no such tool;%s fix the taint block in mcp.hcl", err, suggestTool(missing, live))
	}
	return nil
}

// suggestTool is " did you mean "x"?" for the tool of live whose name is
// closest to name, or "" when none is close.
func suggestTool(name string, live *lock.Entry) string {
	names := make([]string, len(live.Tools))
	for i, t := range live.Tools {
		names[i] = t.Key
	}
	if c := lang.Suggest(name, names); c != "" {
		return fmt.Sprintf(" did you mean %q?", c)
	}
	return ""
}

// unknownVersionedTools refuses a tool version block naming a tool the
// server does not have: a misspelt name would declare a version nothing
// checks.
func unknownVersionedTools(s *lang.Server, live *lock.Entry) string {
	var msg string
	names := make([]string, 0, len(s.ToolVersions))
	for n := range s.ToolVersions {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, tool := range names {
		if _, ok := live.Find(lock.Tools, tool); !ok {
			msg = joinErr(msg, fmt.Sprintf("tool %q has a declared version, but the server lists no such tool;%s fix the tool block in mcp.hcl", escape.String(tool), suggestTool(tool, live)))
		}
	}
	return msg
}

// toolVersionErrors applies the bump gate to each tool with a declared
// version, over the changes under that tool's address.
func toolVersionErrors(sp *ServerPlan, s *lang.Server, old *lock.Entry) string {
	var msg string
	names := make([]string, 0, len(s.ToolVersions))
	for n := range s.ToolVersions {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, tool := range names {
		prefix := sp.Addr + ".tool." + tool
		var required Grade
		for _, c := range sp.Changes {
			if c.Class == Definitional && (c.Addr == prefix || len(c.Addr) > len(prefix) && c.Addr[:len(prefix)+1] == prefix+".") {
				required = max(required, c.Grade)
			}
		}
		prev := ""
		if old.Mcpform != nil {
			prev = old.Mcpform.Tools[tool].Version
		}
		if err := CheckVersionBump(prev, s.ToolVersions[tool], required); err != nil {
			msg = joinErr(msg, fmt.Sprintf("tool %q: %v", tool, err))
		}
	}
	return msg
}

func joinErr(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

func settingsOrEmpty(s *lock.Settings) lock.Settings {
	if s == nil {
		return lock.Settings{}
	}
	return *s
}

func protocolName(p string) string {
	if p == "" {
		return "auto"
	}
	return p
}

func rawOrEmpty(r json.RawMessage) json.RawMessage {
	if len(r) == 0 {
		return json.RawMessage(`{}`)
	}
	return r
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("plan: marshaling %T: %v", v, err))
	}
	return b
}

// ServerAddr is the address plans give the lock entry name: "a.b.s" is
// server s of module b inside module a, "module.a.module.b.server.s".
// verify, which has no mcp.hcl, addresses its findings with it.
func ServerAddr(name string) string {
	addr := ""
	for {
		i := indexByte(name, '.')
		if i < 0 {
			return addr + "server." + name
		}
		addr += "module." + name[:i] + "."
		name = name[i+1:]
	}
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

func targetExists(t string, cfg *lang.Config, locked *lock.File) bool {
	for _, s := range cfg.Servers {
		if s.Name == t || s.Addr == t {
			return true
		}
	}
	for name := range locked.Servers {
		if name == t || ServerAddr(name) == t {
			return true
		}
	}
	return false
}

// ConfigDigest identifies the evaluated configuration a plan was made
// from: every server as evaluated, and the lock path. Formatting and
// comments do not change it; any evaluated value does (a server's
// DeclRange, where its block stands, is not in its JSON).
func ConfigDigest(cfg *lang.Config) string {
	v := struct {
		Lockfile string
		Servers  []*lang.Server
	}{cfg.Lockfile, cfg.Servers}
	sum := sha256.Sum256(mustJSON(v))
	return "sha256:" + hex.EncodeToString(sum[:])
}
