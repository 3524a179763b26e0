package onboard

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/lang"
)

// Options says how Import labels what it writes.
type Options struct {
	// Source is the file's path as the user should see it, for the header
	// comment and messages ("" leaves it out).
	Source string
	// Client is the client the file belongs to; "" detects it from the
	// keys ("servers" is VS Code, "mcpServers" the others).
	Client Client
	// RequiredVersion, when set, becomes the mcpform block's
	// required_version constraint (">= 0.1.0").
	RequiredVersion string
	// LookPath finds a bare command name ("mcp-server-everything") as
	// mcpform run will, so that Import can tell a #!/usr/bin/env script,
	// which needs PATH in env; "" when not found. Nil looks on this
	// process's PATH; func(string) string { return "" } looks nowhere.
	LookPath func(prog string) string
}

// head returns the start of the program a client's command names, for
// lang.LauncherOf: an absolute path, or a bare name through LookPath. A
// relative path depends on where the client ran, and is not read.
func (o Options) head(prog string) []byte {
	switch {
	case filepath.IsAbs(prog):
	case strings.ContainsAny(prog, `/\`):
		return nil
	default:
		look := o.LookPath
		if look == nil {
			look = func(p string) string { return lang.LookPath(p, os.Getenv("PATH")) }
		}
		if prog = look(prog); prog == "" {
			return nil
		}
	}
	return lang.ReadHead(prog)
}

// Note is something the user must know about the conversion. Warnings are
// things to fix before trusting the result (an unpinned package, a path
// that depends on where the client ran); the rest are information (which
// environment variables must now come from the environment).
type Note struct {
	Server  string // the name in the client file; "" for the file as a whole
	Warning bool
	Text    string
}

func (n Note) String() string {
	var b strings.Builder
	if n.Warning {
		b.WriteString("Warning: ")
	}
	if n.Server != "" {
		fmt.Fprintf(&b, "server %s: ", strconv.Quote(n.Server))
	}
	b.WriteString(n.Text)
	return b.String()
}

// Result is an imported configuration.
type Result struct {
	Client Client
	// HCL is the formatted mcp.hcl.
	HCL []byte
	// Imported maps each imported server's name in mcp.hcl to its name in
	// the client file, in file order through Names.
	Names    []string
	Imported map[string]string
	// Skipped lists the servers not imported (entries without a command or
	// a url, remote servers whose url mcp.hcl would refuse, entries that
	// already launch mcpform run), by their names in the client file.
	Skipped []string
	Notes   []Note
}

// clientServer is one server entry of a client file, as written.
type clientServer struct {
	name     string
	typ      string
	command  string
	args     []string
	env      []member
	url      string
	headers  []member // header names and values (often credentials: never printed)
	cwd      string
	envFile  string
	other    []string // keys not carried over
	disabled bool
}

// Import converts a client configuration file into mcp.hcl: one server
// block per stdio server, command as the argv, env as names only, and one
// per remote (HTTP or SSE) server, url and fixed headers without any
// credential, a Bearer token as auth { bearer_env }, the name of the
// variable to read it from (remote.go). It fails
// on a file it cannot read as a client configuration, and reports every
// lossy or risky step as a Note.
func Import(data []byte, opts Options) (*Result, error) {
	plain, err := standardJSON(data)
	if err != nil {
		return nil, fmt.Errorf("reading the client configuration: %w", err)
	}
	top, err := object(plain)
	if err != nil {
		return nil, fmt.Errorf("reading the client configuration: %w", err)
	}
	client := opts.Client
	raw, key, err := serversOf(top, client)
	if err != nil {
		return nil, err
	}
	if client == "" && key == "servers" {
		client = VSCode
	}
	res := &Result{Client: client, Imported: map[string]string{}}
	if client == VSCode {
		res.Notes = append(res.Notes, vscodeInputs(top)...)
	}
	servers, err := object(raw)
	if err != nil {
		return nil, fmt.Errorf("reading %q: %w", key, err)
	}
	if len(servers) == 0 {
		return nil, fmt.Errorf("%q lists no servers: there is nothing to import", key)
	}

	var body strings.Builder
	var skipped, managed []string
	taken := map[string]bool{}
	for _, m := range servers {
		s, err := decodeServer(m)
		if err != nil {
			return nil, err
		}
		note := func(warn bool, format string, a ...any) {
			res.Notes = append(res.Notes, Note{Server: s.name, Warning: warn, Text: fmt.Sprintf(format, a...)})
		}
		skip := func(r *skipReason) {
			res.Skipped = append(res.Skipped, s.name)
			skipped = append(skipped, fmt.Sprintf("%s: %s", strconv.Quote(s.name), r.short))
			note(true, "not imported: %s", r.long)
		}
		kind, reason := remoteKind(s)
		if reason != nil {
			skip(reason)
			continue
		}
		var rs *remoteServer
		if kind != "" {
			// The name it would have, taken only once it is imported.
			if rs, reason = convertRemote(s, kind, identifier(s.name, taken)); reason != nil {
				skip(reason)
				continue
			}
		}
		if rs == nil && strings.TrimSpace(s.command) == "" {
			res.Skipped = append(res.Skipped, s.name)
			skipped = append(skipped, fmt.Sprintf("%s: no command", strconv.Quote(s.name)))
			note(true, "has no command and no url, so it was not imported")
			continue
		}
		// An entry client-config wrote launches `mcpform run`: the server
		// is in a lock already. Importing it would make mcpform run
		// mcpform, a server whose command is the proxy of itself.
		if r, ok := launchOf(s.command, s.args); ok && rs == nil {
			res.Skipped = append(res.Skipped, s.name)
			held := strconv.Quote(r.lock)
			if r.name != s.name {
				held += ", as " + strconv.Quote(r.name)
			}
			managed = append(managed, fmt.Sprintf("%s: mcpform run (lock %s)", strconv.Quote(s.name), held))
			res.Notes = append(res.Notes, Note{Text: fmt.Sprintf("server %s is already managed by mcpform (lock %s): left out", strconv.Quote(s.name), held)})
			continue
		}

		name := identifier(s.name, taken)
		taken[name] = true
		res.Names = append(res.Names, name)
		res.Imported[name] = s.name
		var comments []string
		comment := func(format string, a ...any) { comments = append(comments, fmt.Sprintf(format, a...)) }
		if name != s.name {
			note(false, "renamed to %q: a server name must be an identifier (letters, digits, _ and -, starting with a letter or _)", name)
			comment("Imported from %s (renamed: a server name must be an identifier).", strconv.Quote(s.name))
		}
		if s.disabled {
			note(true, "is disabled in the client; imported anyway: delete the block if you do not want it")
			comment("Disabled in the client.")
		}
		if rs != nil {
			for _, n := range rs.notes {
				note(n.warn, "%s", n.text)
				if n.comment != "" {
					comment("%s", n.comment)
				}
			}
			if ignored := stdioOnly(s); len(ignored) > 0 {
				note(false, "not carried over: %s (a url server is no process mcpform starts)", strings.Join(ignored, ", "))
			}
			for _, k := range s.other {
				if k == "auth" || k == "oauth" {
					note(true, "the client's OAuth settings (%s) are not carried over: mcpform cannot sign in with OAuth yet. If the server takes a static token, export it as %s and add auth { bearer_env = %s }", k, envToken(name), strconv.Quote(envToken(name)))
				}
			}
			if other := slices.DeleteFunc(slices.Clone(s.other), func(k string) bool { return k == "auth" || k == "oauth" }); len(other) > 0 {
				note(false, "not carried over: %s", strings.Join(other, ", "))
			}
			fmt.Fprintf(&body, "\nserver %s {\n", escape.HCLString(name))
			for _, c := range comments {
				fmt.Fprintf(&body, "  # %s\n", oneLine(c))
			}
			writeRemote(&body, rs)
			body.WriteString("}\n")
			continue
		}

		argv := append([]string{s.command}, s.args...)
		for _, w := range argvWarnings(argv) {
			note(true, "%s", w.text)
			comment("WARNING: %s", w.comment)
		}
		if s.cwd != "" {
			note(true, "cwd %q is not carried over: mcpform runs the command from the directory of mcp.hcl", s.cwd)
			comment("WARNING: the client ran this from %s; mcpform runs it from the directory of mcp.hcl.", strconv.Quote(s.cwd))
		}

		var envNames, withValues []string
		for _, e := range s.env {
			if !envNameRE.MatchString(e.Key) {
				note(true, "environment variable %q is not a valid name (letters, digits, _; not starting with a digit) and was left out", e.Key)
				continue
			}
			envNames = append(envNames, e.Key)
			if hasValue(e.Value) {
				withValues = append(withValues, e.Key)
			}
			var v string
			if json.Unmarshal(e.Value, &v) == nil {
				if m := vscodeInput.FindStringSubmatch(v); m != nil {
					note(false, "%s took its value from the VS Code input %q, which only VS Code can prompt for", e.Key, m[1])
				}
			}
		}
		if len(withValues) > 0 {
			note(false, "the client file set %s; mcp.hcl keeps only the names (values are never copied): set %s in the environment mcpform runs in",
				strings.Join(withValues, ", "), pronoun(len(withValues)))
			comment("Set in the environment (the client file's values were not copied): %s.", strings.Join(withValues, ", "))
		}
		// A server gets only the variables env lists: what its launcher
		// needs to start (npx: PATH and HOME) is written too, with why.
		if l, ok := lang.LauncherOf(argv, opts.head); ok {
			var added []string
			for _, n := range l.Needs {
				if !slices.Contains(envNames, n) {
					envNames = append(envNames, n)
					added = append(added, n)
				}
			}
			if len(added) > 0 {
				names := strings.Join(l.Needs, " and ")
				note(false, "env passes %s: %s needs %s, and mcpform gives a server only the variables its env lists", names, l.Name, l.Why)
				comment("env passes %s: %s needs %s; a server gets only the variables env lists.", names, l.Name, l.Why)
			}
		}
		if s.envFile != "" {
			note(true, "envFile %q is not carried over: list the names it sets in env and set them in the environment", s.envFile)
			comment("WARNING: the client read variables from %s; list the ones the server needs in env.", strconv.Quote(s.envFile))
		}
		if len(s.other) > 0 {
			note(false, "not carried over: %s", strings.Join(s.other, ", "))
		}

		fmt.Fprintf(&body, "\nserver %s {\n", escape.HCLString(name))
		for _, c := range comments {
			fmt.Fprintf(&body, "  # %s\n", oneLine(c))
		}
		fmt.Fprintf(&body, "  command = %s\n", list(argv))
		if len(envNames) > 0 {
			fmt.Fprintf(&body, "  env = %s\n", list(envNames))
		}
		body.WriteString("}\n")
	}

	var src strings.Builder
	src.WriteString("# Imported by `mcpform import`")
	if client != "" {
		fmt.Fprintf(&src, " from %s's configuration", client.Title())
	}
	if opts.Source != "" {
		fmt.Fprintf(&src, " (%s)", oneLine(opts.Source))
	}
	src.WriteString(".\n")
	src.WriteString("# Review every command before `mcpform plan`: each runs as written, without a shell.\n")
	if opts.RequiredVersion != "" {
		fmt.Fprintf(&src, "\nmcpform {\n  required_version = %s\n}\n", escape.HCLString(opts.RequiredVersion))
	}
	src.WriteString(body.String())
	if len(skipped) > 0 {
		src.WriteString("\n# Not imported (mcpform import's warnings say what to do):\n")
		for _, s := range skipped {
			fmt.Fprintf(&src, "#   %s\n", oneLine(s))
		}
	}
	if len(managed) > 0 {
		src.WriteString("\n# Not imported: these already run through mcpform, from the lock they name.\n")
		for _, s := range managed {
			fmt.Fprintf(&src, "#   %s\n", oneLine(s))
		}
	}
	out, diags := lang.Format([]byte(src.String()), lang.ConfigFile)
	if diags.HasErrors() {
		// Import builds every string with quote, so this is a bug.
		return nil, fmt.Errorf("formatting the generated mcp.hcl: %s", diags.Error())
	}
	res.HCL = out
	switch {
	case len(res.Names) == 0 && len(managed) == len(servers):
		res.Notes = append(res.Notes, Note{Warning: true, Text: "every server already runs through mcpform: there is nothing to import; change the mcp.hcl beside the lock instead"})
	case len(res.Names) == 0:
		res.Notes = append(res.Notes, Note{Warning: true, Text: "no server to import: mcp.hcl declares no servers"})
	}
	return res, nil
}

// serversOf finds the servers object: "mcpServers" (Claude Desktop, Claude
// Code, Cursor), "servers" (VS Code's mcp.json), or "mcp"."servers" (VS
// Code's settings.json).
func serversOf(top []member, c Client) (json.RawMessage, string, error) {
	keys := []string{"mcpServers", "servers"}
	if c != "" {
		keys = []string{c.serversKey()}
	}
	for _, k := range keys {
		if v, ok := lookup(top, k); ok {
			return v, k, nil
		}
	}
	if v, ok := lookup(top, "mcp"); ok && (c == "" || c == VSCode) {
		if inner, err := object(v); err == nil {
			if s, ok := lookup(inner, "servers"); ok {
				return s, "servers", nil
			}
		}
	}
	if c != "" {
		return nil, "", fmt.Errorf("no %q key: this is not a %s configuration", c.serversKey(), c.Title())
	}
	return nil, "", errors.New(`no "mcpServers" or "servers" key: this is not an MCP client configuration`)
}

func decodeServer(m member) (*clientServer, error) {
	s := &clientServer{name: m.Key}
	fields, err := object(m.Value)
	if err != nil {
		return nil, fmt.Errorf("server %q: %w", m.Key, err)
	}
	str := func(k string, v json.RawMessage, dst *string) error {
		if err := json.Unmarshal(v, dst); err != nil {
			return fmt.Errorf("server %q: %s must be a string", m.Key, k)
		}
		return nil
	}
	for _, f := range fields {
		var err error
		switch f.Key {
		case "type":
			err = str(f.Key, f.Value, &s.typ)
		case "command":
			err = str(f.Key, f.Value, &s.command)
		case "url", "serverUrl":
			err = str(f.Key, f.Value, &s.url)
		case "cwd":
			err = str(f.Key, f.Value, &s.cwd)
		case "envFile":
			err = str(f.Key, f.Value, &s.envFile)
		case "args":
			if json.Unmarshal(f.Value, &s.args) != nil {
				err = fmt.Errorf("server %q: args must be a list of strings", m.Key)
			}
		case "env":
			if s.env, err = object(f.Value); err != nil {
				err = fmt.Errorf("server %q: env must be an object: %w", m.Key, err)
			}
		case "disabled":
			json.Unmarshal(f.Value, &s.disabled)
		case "headers":
			// Only remote servers have headers; their values (often
			// tokens) are never printed. Anything but an object is no
			// header mcpform could send.
			if string(f.Value) == "null" {
				break
			}
			if s.headers, err = object(f.Value); err != nil {
				err = fmt.Errorf("server %q: headers must be an object of header names and values", m.Key)
			}
		default:
			s.other = append(s.other, f.Key)
		}
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}

// mcpformLaunch is what a client entry that launches `mcpform run` serves.
type mcpformLaunch struct {
	lock string // the -lock argument as written; "mcp.lock" by default
	name string // the server's name in that lock
}

// launchOf reports whether command and args launch mcpform's proxy,
// `mcpform [-chdir DIR] run [flags] NAME`, as client-config writes it
// (the binary by any path, mcpform.exe on Windows, the lock by -lock), and
// what it serves.
func launchOf(command string, args []string) (mcpformLaunch, bool) {
	base := command[strings.LastIndexAny(command, `/\`)+1:]
	if strings.TrimSuffix(strings.ToLower(base), ".exe") != "mcpform" {
		return mcpformLaunch{}, false
	}
	if len(args) > 0 && strings.HasPrefix(args[0], "-chdir=") {
		args = args[1:]
	} else if len(args) > 1 && args[0] == "-chdir" {
		args = args[2:]
	}
	if len(args) == 0 || args[0] != "run" {
		return mcpformLaunch{}, false
	}
	l := mcpformLaunch{lock: "mcp.lock"}
	// run's flags, those with a value (cmd/mcpform/run.go); the flag
	// package takes them before or after the name, with - or --.
	valued := map[string]bool{"lock": true, "audit": true, "spin": true}
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			if i+1 < len(args) && l.name == "" {
				l.name = args[i+1]
			}
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			if l.name == "" {
				l.name = a
			}
			continue
		}
		flag, value, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		if valued[flag] && !hasValue && i+1 < len(args) {
			i++
			value = args[i]
		}
		if flag == "lock" {
			l.lock = value
		}
	}
	if l.name == "" {
		return mcpformLaunch{}, false
	}
	return l, true
}

// stdioOnly lists the keys of a remote entry that only a stdio server has,
// which a url server does without.
func stdioOnly(s *clientServer) []string {
	var out []string
	for _, f := range []struct {
		key string
		set bool
	}{{"command", s.command != ""}, {"args", len(s.args) > 0}, {"env", len(s.env) > 0}, {"cwd", s.cwd != ""}, {"envFile", s.envFile != ""}} {
		if f.set {
			out = append(out, f.key)
		}
	}
	return out
}

// hasValue reports whether an env value in a client file is set, so that the
// user must now set it in the environment. A value is never returned.
func hasValue(v json.RawMessage) bool {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s != ""
	}
	return string(v) != "null"
}

func pronoun(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// vscodeInputs reports VS Code "inputs": values VS Code prompts for, which
// mcpform cannot prompt for.
func vscodeInputs(top []member) []Note {
	raw, ok := lookup(top, "inputs")
	if !ok {
		return nil
	}
	var inputs []struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(raw, &inputs) != nil || len(inputs) == 0 {
		return nil
	}
	var ids []string
	for _, in := range inputs {
		ids = append(ids, strconv.Quote(in.ID))
	}
	return []Note{{Text: fmt.Sprintf("VS Code prompts for the inputs %s; mcpform takes values only from the environment: set the variables that used them before running mcpform", strings.Join(ids, ", "))}}
}

// vscodeInput matches VS Code's ${input:ID} variable; the ID is the
// input's name in the file, not a value.
var vscodeInput = regexp.MustCompile(`\$\{input:([^}]*)\}`)

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// identifier turns a client's server name into an HCL identifier that is not
// yet taken: other characters become "_", a leading digit or hyphen gets a
// "_" in front, and a clash gets a numeric suffix.
func identifier(name string, taken map[string]bool) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	id := b.String()
	if id == "" || !(id[0] == '_' || (id[0] >= 'a' && id[0] <= 'z') || (id[0] >= 'A' && id[0] <= 'Z')) {
		id = "_" + id
	}
	base := id
	for i := 2; taken[id]; i++ {
		id = fmt.Sprintf("%s_%d", base, i)
	}
	return id
}

func list(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = escape.HCLString(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// oneLine makes text safe for a "#" comment: line breaks, control and
// invisible characters are written as escapes; everything else as is.
func oneLine(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case escape.Hidden(r):
			escape.WriteU(&b, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// warning is one finding about an argv, for stderr and for the comment.
type warning struct{ text, comment string }

// argvWarnings checks an argv for what an import cannot fix by itself:
// unpinned packages, paths that depend on where or on what the client ran,
// client variables mcpform does not expand, and credentials.
func argvWarnings(argv []string) []warning {
	var ws []warning
	if lang.ProgramName(argv[0]) == "cmd" {
		ws = append(ws, warning{
			text:    "the command runs through Windows' cmd, which exists only on Windows: on Linux and macOS start the program itself (drop \"cmd\", \"/c\")",
			comment: "the command runs through cmd, which exists only on Windows.",
		})
	}
	if w, ok := unpinned(argv); ok {
		ws = append(ws, w)
	}
	for i, a := range argv {
		what := "the command"
		if i > 0 {
			what = fmt.Sprintf("argument %d (%s)", i, strconv.Quote(a))
		}
		switch {
		case windowsPath(a):
			ws = append(ws, warning{
				text:    what + " is a Windows path, kept verbatim: it works only where that path exists",
				comment: what + " is a Windows path: it works only on Windows.",
			})
		case relativePath(a, i == 0):
			ws = append(ws, warning{
				text:    what + " is a relative path, kept verbatim: mcpform resolves it from the directory of mcp.hcl, not from where the client ran",
				comment: what + " is relative to the directory of mcp.hcl.",
			})
		}
		if m := clientVar.FindString(a); m != "" {
			ws = append(ws, warning{
				text:    fmt.Sprintf("%s uses the client variable %s, kept verbatim: mcpform does not expand it", what, m),
				comment: fmt.Sprintf("%s uses %s, which mcpform does not expand.", what, m),
			})
		}
		if i > 0 && credential(argv, i) {
			ws = append(ws, warning{
				text:    fmt.Sprintf("argument %d looks like a credential and mcp.hcl is meant to be committed: pass it through an environment variable instead if the server can read one", i),
				comment: fmt.Sprintf("argument %d looks like a credential: do not commit it.", i),
			})
		}
	}
	return ws
}

// clientVar matches the variables clients expand in args and mcpform does
// not: VS Code's ${input:x}, ${env:X}, ${workspaceFolder}; Claude Code's
// ${VAR} and ${VAR:-default}; Windows' %VAR%.
var clientVar = regexp.MustCompile(`\$\{[^}]*\}|%[A-Za-z_][A-Za-z0-9_]*%`)

var (
	driveRE      = regexp.MustCompile(`^[A-Za-z]:[\\/]`)
	scriptSuffix = regexp.MustCompile(`\.(js|mjs|cjs|ts|py|sh|jar|rb|exe|bat|cmd|ps1)$`)
)

func pathPart(a string) string {
	if strings.HasPrefix(a, "-") {
		if _, v, ok := strings.Cut(a, "="); ok {
			return v
		}
		return ""
	}
	return a
}

func windowsPath(a string) bool {
	p := pathPart(a)
	return driveRE.MatchString(p) || strings.HasPrefix(p, `\\`) || strings.HasPrefix(p, `.\`) || strings.HasPrefix(p, `..\`)
}

func relativePath(a string, command bool) bool {
	p := pathPart(a)
	if p == "" || driveRE.MatchString(p) || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || strings.HasPrefix(p, "@") || strings.Contains(p, "://") {
		return false
	}
	if p == "." || p == ".." || strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../") {
		return true
	}
	if command {
		return strings.Contains(p, "/")
	}
	return strings.Contains(p, "/") && scriptSuffix.MatchString(p)
}

var (
	secretFlag    = regexp.MustCompile(`(?i)^--?[a-z0-9_-]*(token|secret|password|passwd|api[-_]?key|access[-_]?key|auth)[a-z0-9_-]*$`)
	secretValue   = regexp.MustCompile(`^(sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|glpat-[A-Za-z0-9_-]{16,})$`)
	passwordInURL = regexp.MustCompile(`://[^/@:\s]+:[^/@\s]+@`)
)

// credential reports whether argv[i] looks like a secret: a known token
// format, a URL with a password, the value of a --token style flag.
func credential(argv []string, i int) bool {
	a := argv[i]
	if flag, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "-") && secretFlag.MatchString(flag) && v != "" && !clientVar.MatchString(v) {
		return true
	}
	if i > 1 && secretFlag.MatchString(argv[i-1]) && !strings.HasPrefix(a, "-") && !clientVar.MatchString(a) {
		return true
	}
	return secretValue.MatchString(pathPart(a)) || passwordInURL.MatchString(a)
}

// unpinned reports a package runner's command (npx, uvx, pnpm dlx, bunx)
// whose package has no exact version, with the pinned form to write
// instead: lang.UnpinnedPackage, which validate and plan warn with too.
func unpinned(argv []string) (warning, bool) {
	u, ok := lang.UnpinnedPackage(argv)
	if !ok {
		return warning{}, false
	}
	return warning{
		text: fmt.Sprintf("%s package %s is not pinned to a version, so plan could lock one release and run start another: pin it, e.g. command = %s (replace VERSION with the release you reviewed; %s)",
			u.Runner, strconv.Quote(u.Spec), list(u.Fixed), u.Where()),
		comment: fmt.Sprintf("%s package %s is not pinned: use %s.", u.Runner, strconv.Quote(u.Spec), strconv.Quote(u.Pinned)),
	}, true
}
