package lang

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/mcpform/mcpform/internal/escape"
)

// A server gets only the environment variables its env lists, PATH and
// HOME included (runtime starts it with nothing else). Most servers are
// started through a launcher that needs both: npx finds node through PATH
// and keeps its package cache under HOME. Such a server fails only when
// plan starts it, after its timeout; validate warns first, and import
// writes the names.
//
// The launchers, by the program command[0] names (its base name, without a
// Windows .exe/.cmd/.bat, and looked through a Windows `cmd /c` wrapper):
//
//	npx, npm exec, npm x         PATH (node, the package's own #!/usr/bin/env node), HOME (~/.npm)
//	pnpm dlx, pnpx               PATH, HOME (pnpm's store and cache)
//	yarn dlx                     PATH, HOME (yarn's cache)
//	bunx, bun x                  PATH, HOME (~/.bun/install/cache)
//	uvx, uv tool run, uv run     PATH (python), HOME (uv's cache, ~/.cache/uv)
//	pipx run                     PATH (python), HOME (pipx's cache, ~/.local)
//	a #!/usr/bin/env NAME script PATH: env finds NAME (node, python3, …) there
//
// A script is command[0] when its first line is a #!/usr/bin/env (or
// /bin/env) line: a path (absolute, or relative to the configuration's
// directory, where servers start), or a bare name found on mcpform's own
// PATH, as run finds it, such as a server `npm install -g` put there.
// Another program (a Go or Rust binary, `#!/usr/bin/python3`, `go run`) is
// not a launcher here: it may need no environment at all, and a warning
// for every server would be noise.
//
// The runners whose package mcpform pins with its whole tree (npx, npm
// exec, pnpm dlx, bunx, uvx, uv tool run, pipx run; not through cmd /c)
// never run: plan probes and run starts the pinned package from mcpform's
// cache with node or python3 (Launcher.Pinned). Their needs above do not
// apply, and validate checks that node and npm, or python3, are on PATH
// instead of the runner.

// Launcher is how a command starts its server, when that needs variables
// of the environment.
type Launcher struct {
	// Name is the launcher as the user knows it: "npx", "pnpm dlx",
	// "a #!/usr/bin/env node script".
	Name string
	// Needs lists the variables it needs, PATH first.
	Needs []string
	// Why says what each is for, as a clause: "PATH to find node and HOME
	// for its package cache".
	Why string
	// Pinned, for a package runner whose package mcpform pins with its
	// whole tree (npx, npm exec, pnpm dlx, bunx, uvx, uv tool run, pipx
	// run), lists the programs mcpform pins and starts it with instead
	// ("node", "npm"; "python3"): the runner itself never runs, so its
	// needs of the server's environment do not apply.
	Pinned []string
}

// The programs mcpform pins and starts a runner's package with.
var (
	pinnedNPM  = []string{"node", "npm"}
	pinnedPyPI = []string{"python3"}
)

// launchers are the package runners, by program and, for those run as a
// subcommand, the subcommands that launch.
var launchers = []struct {
	prog   string
	sub    []string
	why    string
	pinned []string // Launcher.Pinned
}{
	{"npx", nil, "PATH to find node (and the package's own commands) and HOME for npm's package cache", pinnedNPM},
	{"npm", []string{"exec", "x"}, "PATH to find node (and the package's own commands) and HOME for npm's package cache", pinnedNPM},
	{"pnpx", nil, "PATH to find node and HOME for pnpm's store and cache", nil},
	{"pnpm", []string{"dlx"}, "PATH to find node and HOME for pnpm's store and cache", pinnedNPM},
	{"yarn", []string{"dlx"}, "PATH to find node and HOME for yarn's cache", nil},
	{"bunx", nil, "PATH to find the package's commands and HOME for bun's install cache", pinnedNPM},
	{"bun", []string{"x"}, "PATH to find the package's commands and HOME for bun's install cache", pinnedNPM},
	{"uvx", nil, "PATH to find python and HOME for uv's cache", pinnedPyPI},
	{"uv", []string{"tool"}, "PATH to find python and HOME for uv's cache", pinnedPyPI},
	{"uv", []string{"run"}, "PATH to find python and HOME for uv's cache", nil},
	{"pipx", []string{"run"}, "PATH to find python and HOME for pipx's cache", pinnedPyPI},
}

// LauncherOf reports the launcher argv starts its server with. head
// returns the first bytes of the program argv[0] names (nil when it cannot
// be read, or to look at names only); a nil head looks at names only.
func LauncherOf(argv []string, head func(prog string) []byte) (Launcher, bool) {
	if len(argv) == 0 {
		return Launcher{}, false
	}
	wrapped := false // a Windows cmd /c wrapper, which mcpform does not pin through
	if ProgramName(argv[0]) == "cmd" && len(argv) > 2 && strings.EqualFold(argv[1], "/c") {
		argv, wrapped = argv[2:], true
	}
	prog := ProgramName(argv[0])
	for _, l := range launchers {
		if prog != l.prog {
			continue
		}
		name := l.prog
		if l.sub != nil {
			sub := firstArg(argv[1:])
			if !slices.Contains(l.sub, sub) {
				continue
			}
			name += " " + sub
		}
		out := Launcher{Name: name, Needs: []string{"PATH", "HOME"}, Why: l.why}
		if !wrapped {
			out.Pinned = l.pinned
		}
		return out, true
	}
	if head == nil {
		return Launcher{}, false
	}
	if interp, ok := envShebang(head(argv[0])); ok {
		return Launcher{
			Name:  "a #!/usr/bin/env " + interp + " script",
			Needs: []string{"PATH"},
			Why:   "PATH to find " + interp,
		}, true
	}
	return Launcher{}, false
}

// firstArg is the first argument that is not a flag: the subcommand of
// `npm --yes exec …`.
func firstArg(args []string) string {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

// envShebang returns the interpreter a "#!/usr/bin/env NAME" first line
// names (env -S and env's other flags skipped); ok is false for any other
// start, including "#!/usr/bin/python3", which needs no PATH.
func envShebang(head []byte) (string, bool) {
	line, ok := bytes.CutPrefix(head, []byte("#!"))
	if !ok {
		return "", false
	}
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	fields := strings.Fields(string(line))
	if len(fields) < 2 || filepath.Base(fields[0]) != "env" {
		return "", false
	}
	for _, f := range fields[1:] {
		if strings.HasPrefix(f, "-") || strings.Contains(f, "=") {
			continue // -S, -i, NAME=value
		}
		return filepath.Base(f), true
	}
	return "", false
}

// ProgramName is a program's base name without a Windows extension,
// lowercase: "C:\…\npx.cmd" is npx. Import and the launcher checks
// recognise programs by it.
func ProgramName(p string) string {
	if j := strings.LastIndexAny(p, `/\`); j >= 0 {
		p = p[j+1:]
	}
	p = strings.ToLower(p)
	for _, ext := range []string{".cmd", ".exe", ".bat"} {
		p = strings.TrimSuffix(p, ext)
	}
	return p
}

// headBytes is how much of a program checkLauncher reads: a #! line.
const headBytes = 256

// ReadHead returns the first bytes of the file name, nil when it cannot be
// read or is not a regular file.
func ReadHead(name string) []byte {
	f, err := os.Open(name)
	if err != nil {
		return nil
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(f, headBytes))
	return b
}

// LookPath finds a bare program name in the directories of path (a PATH
// value), as exec.LookPath does, without reading the process environment:
// "" when it is not there.
func LookPath(prog, path string) string {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // a relative PATH entry would depend on where mcpform runs
		}
		p := filepath.Join(dir, prog)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// programHead returns the head of the program argv[0] names, resolved as
// run resolves it: an absolute path as is, a relative path from the
// configuration's directory, a bare name through opts.LookPath (none
// without it).
func (l *loader) programHead(prog string) []byte {
	switch {
	case filepath.IsAbs(prog):
	case strings.ContainsAny(prog, `/\`):
		prog = filepath.Join(l.root, prog)
	default:
		if l.opts.LookPath == nil {
			return nil
		}
		if prog = l.opts.LookPath(prog); prog == "" {
			return nil
		}
	}
	return ReadHead(prog)
}

// checkLauncher warns when srv starts through a launcher and its env does
// not pass what the launcher needs. env is the env attribute (nil when the
// server has none), command the command attribute.
func (s *scope) checkLauncher(srv *Server, command, env *hcl.Attribute) hcl.Diagnostics {
	l, ok := LauncherOf(srv.Command, s.head)
	if !ok || l.Pinned != nil {
		// A pinned runner's package starts without the runner
		// (checkProgram looks for what it starts with instead).
		return nil
	}
	var missing []string
	for _, n := range l.Needs {
		if !slices.Contains(srv.Env, n) {
			missing = append(missing, n)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	subject := command.Expr.Range()
	if env != nil {
		subject = env.Expr.Range()
	}
	quoted := make([]string, 0, len(srv.Env)+len(missing))
	for _, n := range append(slices.Clone(srv.Env), missing...) {
		quoted = append(quoted, fmt.Sprintf("%q", n))
	}
	names := strings.Join(missing, " and ")
	return hcl.Diagnostics{{
		Severity: hcl.DiagWarning,
		Summary:  fmt.Sprintf("Launcher without %s", names),
		Detail: fmt.Sprintf("%s starts through %s, which needs %s, but a server gets only the environment variables its env lists, so it would fail to start. Add %s to env: env = [%s] (names only: the values are read when the server starts).",
			srv.Addr, l.Name, l.Why, names, strings.Join(quoted, ", ")),
		Subject: &subject,
	}}
}

// installs names what provides a program that servers are commonly started
// with, by its base name (ProgramName), for "install it" advice.
var installs = map[string]string{
	"npx":     "Node.js, whose npm provides npx (https://nodejs.org/en/download)",
	"npm":     "Node.js, which provides npm (https://nodejs.org/en/download)",
	"node":    "Node.js (https://nodejs.org/en/download)",
	"uvx":     "uv, which provides uvx (https://docs.astral.sh/uv/getting-started/installation/)",
	"uv":      "uv (https://docs.astral.sh/uv/getting-started/installation/)",
	"pnpm":    "pnpm (https://pnpm.io/installation)",
	"pnpx":    "pnpm, which provides pnpx (https://pnpm.io/installation)",
	"yarn":    "Yarn (corepack enable, with Node.js: https://yarnpkg.com/getting-started/install)",
	"bunx":    "Bun, which provides bunx (https://bun.sh)",
	"bun":     "Bun (https://bun.sh)",
	"deno":    "Deno (https://deno.com)",
	"pipx":    "pipx (https://pipx.pypa.io)",
	"python":  "Python (https://www.python.org/downloads/)",
	"python3": "Python (https://www.python.org/downloads/)",
	"docker":  "Docker (https://docs.docker.com/get-started/get-docker/)",
	"podman":  "Podman (https://podman.io/docs/installation)",
	"go":      "Go (https://go.dev/doc/install)",
}

// InstallAdvice says how to get the program prog names when it is not
// found: "install uv, which provides uvx (https://…)" for a program
// servers are commonly started with, and for any other "install it, or put
// the directory that holds it on PATH".
func InstallAdvice(prog string) string {
	if what, ok := installs[ProgramName(prog)]; ok {
		return "install " + what
	}
	return "install it, or put the directory that holds it on PATH"
}

// checkProgram warns when command[0] is a bare name that is not on
// mcpform's PATH (Options.LookPath), as run would look for it: the server
// would fail to start. A warning, not an error: the program may be
// installed later, or on the machine that runs plan.
func (s *scope) checkProgram(srv *Server, command *hcl.Attribute) hcl.Diagnostics {
	if s.lookPath == nil || len(srv.Command) == 0 {
		return nil
	}
	subject := elemRange(command.Expr, 0)
	if l, ok := LauncherOf(srv.Command, nil); ok && l.Pinned != nil {
		var missing []string
		for _, p := range l.Pinned {
			if s.lookPath(p) == "" {
				missing = append(missing, p)
			}
		}
		if len(missing) == 0 {
			return nil
		}
		return hcl.Diagnostics{{
			Severity: hcl.DiagWarning,
			Summary:  "Program not found",
			Detail: fmt.Sprintf("%s runs its package through %s, which mcpform does not run: plan pins the package with its whole tree and probes it, and run starts it, with %s, and %s not on mcpform's PATH. To fix it, %s; or remove the server's block; or plan the others with -target.",
				srv.Addr, l.Name, strings.Join(l.Pinned, " and "), isAre(missing, strings.Join(missing, " and ")), InstallAdvice(missing[0])),
			Subject: &subject,
		}}
	}
	prog := srv.Command[0]
	if prog == "" || strings.ContainsAny(prog, `/\`) || s.lookPath(prog) != "" {
		return nil
	}
	return hcl.Diagnostics{{
		Severity: hcl.DiagWarning,
		Summary:  "Program not found",
		Detail: fmt.Sprintf("%s starts %s, which is not on mcpform's PATH, so the server would not start. To fix it, %s; or remove the server's block; or plan the others with -target.",
			srv.Addr, escape.HCLString(prog), InstallAdvice(prog)),
		Subject: &subject,
	}}
}

// isAre is names with "is" or "are" after it.
func isAre(missing []string, names string) string {
	if len(missing) == 1 {
		return names + " is"
	}
	return names + " are"
}
