package pins

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Resolve finds the file command[0] names as mcp.Start starts it: os/exec
// looks a bare name up on mcpform's PATH (exec.LookPath), and starts a
// relative path from the server's working directory dir. The result is the
// real file, every symlink followed, since a symlink can be pointed
// elsewhere without touching what it pointed at.
func Resolve(prog, dir string) (string, error) {
	var p string
	switch {
	case filepath.IsAbs(prog):
		p = prog
	case strings.ContainsRune(prog, filepath.Separator) || strings.ContainsRune(prog, '/'):
		p = filepath.Join(dir, prog)
	default:
		lp, err := exec.LookPath(prog)
		if err != nil {
			return "", err
		}
		p = lp
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
	}
	return realFile(p)
}

// realFile is p with every symlink followed, when that is a regular file.
func realFile(p string) (string, error) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	real, err = filepath.Abs(real)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", real)
	}
	return real, nil
}

// interpreter is a family of interpreters: the flags after which no script
// follows (code given inline, a module by name) and the flags that take a
// value as the next argument.
type interpreter struct {
	names     []string
	sub       string // a subcommand before the script ("run" for deno and bun), skipped when present
	noScript  []string
	valueFlag []string
}

var interpreters = []interpreter{
	{names: []string{"node", "nodejs", "tsx"}, noScript: []string{"-e", "--eval", "-p", "--print"},
		valueFlag: []string{"-r", "--require", "--import", "--loader", "--experimental-loader", "-C", "--conditions", "--env-file", "--input-type"}},
	{names: []string{"deno"}, sub: "run", noScript: []string{"eval", "-e"}, valueFlag: []string{"--config", "-c", "--import-map", "--location", "--env-file"}},
	{names: []string{"bun"}, sub: "run", noScript: []string{"-e", "--eval", "-p", "--print"}, valueFlag: []string{"-r", "--preload", "--cwd", "--env-file", "--config", "-c"}},
	{names: []string{"python", "pypy"}, noScript: []string{"-c", "-m"}, valueFlag: []string{"-W", "-X", "-Q"}},
	{names: []string{"ruby"}, noScript: []string{"-e"}, valueFlag: []string{"-I", "-r", "-C", "-E"}},
	{names: []string{"perl"}, noScript: []string{"-e", "-E"}, valueFlag: []string{"-I"}},
	{names: []string{"php"}, noScript: []string{"-r"}, valueFlag: []string{"-c", "-d", "-z"}},
	{names: []string{"bash", "sh", "dash", "zsh", "ksh"}, noScript: []string{"-c"}, valueFlag: []string{"-o", "+o", "-O", "+O"}},
	{names: []string{"lua"}, noScript: []string{"-e"}, valueFlag: []string{"-l"}},
}

// versioned is an interpreter's base name with its version suffix
// ("python3.12", "node22") or ".exe" split off.
var versioned = regexp.MustCompile(`^([a-z]+?)(\d+(\.\d+)*)?(\.exe)?$`)

// interpreterOf returns the family of prog's base name, if it is one.
func interpreterOf(prog string) (interpreter, bool) {
	base := strings.ToLower(filepath.Base(prog))
	m := versioned.FindStringSubmatch(base)
	if m == nil {
		return interpreter{}, false
	}
	for _, in := range interpreters {
		if slices.Contains(in.names, m[1]) || slices.Contains(in.names, base) {
			return in, true
		}
	}
	return interpreter{}, false
}

// ScriptArg returns the argument of command that names the script its
// interpreter runs: the first one after the interpreter's flags (and its
// subcommand, for deno and bun). ok is false when command[0] is no
// interpreter mcpform knows, or is given its code another way.
func ScriptArg(command []string) (arg string, ok bool) {
	if len(command) < 2 {
		return "", false
	}
	in, ok := interpreterOf(command[0])
	if !ok {
		return "", false
	}
	args := command[1:]
	if in.sub != "" && len(args) > 0 && args[0] == in.sub {
		args = args[1:]
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			if i+1 < len(args) {
				return args[i+1], true
			}
			return "", false
		}
		flag, _, hasValue := strings.Cut(a, "=")
		if slices.Contains(in.noScript, flag) {
			return "", false
		}
		if strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+") && slices.Contains(in.valueFlag, flag) {
			if !hasValue && slices.Contains(in.valueFlag, flag) {
				i++
			}
			continue
		}
		return a, true
	}
	return "", false
}

// scriptPath is the path of the script an interpreter command runs, as
// the interpreter opens it from dir (where it starts), symlinks not yet
// followed; ok is false when the command runs no script file by name.
func scriptPath(command []string, dir string) (p string, ok bool) {
	arg, ok := ScriptArg(command)
	if !ok || arg == "" {
		return "", false
	}
	if !filepath.IsAbs(arg) {
		arg = filepath.Join(dir, arg)
	}
	return arg, true
}
