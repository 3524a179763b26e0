package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/mcpform/mcpform/lang"
	"github.com/mcpform/mcpform/mcp"
	"github.com/mcpform/mcpform/runtime/sandbox"
)

func main() {
	sandbox.MaybeRunStage()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], &stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr, getenv: os.Getenv, environ: os.Environ})
	stop()
	os.Exit(code)
}

// stdio is what a subcommand may touch of the outside world besides files:
// its streams and its environment. Tests substitute them all.
type stdio struct {
	in     io.Reader
	out    io.Writer
	err    io.Writer
	getenv func(string) string
	// environ lists the environment as NAME=VALUE, for "did you mean"
	// suggestions only; nil lists nothing.
	environ func() []string
}

// Exit codes shared by every subcommand. verify, plan -detailed-exitcode and
// fmt -check define further codes of their own. A usage error (a bad flag,
// a missing or extra argument) is an error like any other, as in
// terraform: 2 belongs to -detailed-exitcode's "changes", and a CI job must
// never read a mistyped flag as a plan to review.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = exitError
)

// command is one subcommand. run receives the arguments after its name.
type command struct {
	synopsis string
	run      func(ctx context.Context, io *stdio, args []string) int
}

// commands is the table of subcommands, one file each.
var commands = map[string]command{
	"explain":  {"Explain a rule id from a plan: meaning, grade, example", withFlags(parseExplainFlags, runExplain)},
	"version":  {"Print mcpform's version", withFlags(parseVersionFlags, runVersion)},
	"run":      {"Serve a locked server to a client: the enforcing stdio proxy", withFlags(parseRunFlags, runRun)},
	"audit":    {"Check the audit log's hash chain: audit verify [FILE]", withFlags(parseAuditFlags, runAudit)},
	"taint":    {"List tainted client sessions, or reset one after review: taint list | taint reset SESSION|-all", runTaint},
	"verify":   {"Probe locked servers and fail on drift from mcp.lock (the CI gate)", withFlags(parseVerifyFlags, runVerify)},
	"show":     {"Print mcp.lock for humans", withFlags(parseShowFlags, runShow)},
	"plan":     {"Probe servers and show how they differ from mcp.lock", withFlags(parsePlanFlags, runPlan)},
	"apply":    {"Write a reviewed plan to mcp.lock", withFlags(parseApplyFlags, runApply)},
	"sign":     {"Approve mcp.lock (or a saved plan) with an SSH key: a signature in mcp.lock.sig", withFlags(parseSignFlags, runSign)},
	"validate": {"Check mcp.hcl: syntax, types, references, modules, policy", withFlags(parseValidateFlags, runValidate)},
	"fmt":      {"Rewrite mcp.hcl files in the canonical style", withFlags(parseFmtFlags, runFmt)},
	"init":     {"Fetch git modules into .mcpform/modules", withFlags(parseInitFlags, runInit)},
	"install":  {"Install the npm trees mcp.lock pins into mcpform's cache, for offline starts", withFlags(parseInstallFlags, runInstall)},

	// Remote servers that sign in with OAuth.
	"login":  {"Sign in to a remote server with OAuth (auth { oauth = true }) and store its tokens", withFlags(parseLoginFlags, runLogin)},
	"logout": {"Remove the OAuth tokens mcpform login stored for a server", withFlags(parseLogoutFlags, runLogout)},

	// Taint policy: a starting point from the server's annotations.
	"suggest-policy": {"Print a taint block for a locked server from its tools' annotations", withFlags(parseSuggestPolicyFlags, runSuggestPolicy)},

	// Onboarding: from a client's configuration to mcp.hcl and back.
	"import":        {"Write mcp.hcl from an MCP client's configuration (Claude, VS Code, Cursor)", withFlags(parseImportFlags, runImport)},
	"client-config": {"Print or -write the client configuration that launches mcpform run", withFlags(parseClientConfigFlags, runClientConfig)},
	"completion":    {"Print a bash or zsh completion script", withFlags(parseCompletionFlags, runCompletion)},
}

func run(ctx context.Context, args []string, io *stdio) int {
	mcp.SetClientVersion(version) // one version: this one, the lock's generator, clientInfo
	args, code, ok := chdir(args, io)
	if !ok {
		return code
	}
	if len(args) == 0 {
		usage(io.err)
		return exitUsage
	}
	if isHelpFlag(args[0]) || args[0] == "help" {
		// Help asked for goes to stdout, as terraform's: `mcpform help |
		// less` works. `help CMD [SUBCOMMAND]` is CMD's own help.
		if args[0] == "help" && len(args) > 1 {
			return runHelp(ctx, io, args[1], args[2:])
		}
		usage(io.out)
		return exitOK
	}
	if args[0] == "-version" || args[0] == "--version" {
		return commands["version"].run(ctx, io, nil)
	}
	if _, ok := commands[args[0]]; !ok {
		return unknownCommand(io, args[0])
	}
	if wantsHelp(args[1:]) {
		return runHelp(ctx, io, args[0], args[1:])
	}
	return commands[args[0]].run(ctx, io, args[1:])
}

// chdir applies a leading -chdir=DIR, as terraform does, before the
// subcommand name.
func chdir(args []string, io *stdio) ([]string, int, bool) {
	if len(args) == 0 {
		return args, 0, true
	}
	var dir string
	switch {
	case strings.HasPrefix(args[0], "-chdir="):
		dir = strings.TrimPrefix(args[0], "-chdir=")
		args = args[1:]
	case args[0] == "-chdir" && len(args) > 1:
		dir = args[1]
		args = args[2:]
	default:
		return args, 0, true
	}
	if err := os.Chdir(dir); err != nil {
		fmt.Fprintf(io.err, "mcpform: -chdir: %v\n", err)
		return nil, exitError, false
	}
	return args, 0, true
}

// table is commands, for the functions that the table itself refers to
// (completion lists every command, through runCompletion): Go refuses that
// cycle in variable initialisation, so init sets it afterwards.
var table map[string]command

func init() { table = commands }

// commandNames lists the commands, sorted.
func commandNames() []string { return slices.Sorted(maps.Keys(table)) }

func usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: mcpform [-chdir=DIR] <command> [flags] [args]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, n := range commandNames() {
		fmt.Fprintf(w, "  %-16s %s\n", n, commands[n].synopsis)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, `"mcpform help COMMAND" (or "mcpform COMMAND -h") shows a command's flags.`)
}

// suggest is lang.Suggest: one "Did you mean" for the whole tool.
func suggest(s string, candidates []string) string { return lang.Suggest(s, candidates) }

// optionalArg returns the one argument a command may take, or def when it
// got none; more than one is a usage error, said on stderr as
// "mcpform NAME takes at most one argument, WHAT", then the usage.
func optionalArg(fs *flag.FlagSet, stderr io.Writer, def, what string) (string, error) {
	switch fs.NArg() {
	case 0:
		return def, nil
	case 1:
		return fs.Arg(0), nil
	}
	return "", usageFailure(fs, stderr, "mcpform %s takes at most one argument, %s", fs.Name(), what)
}
