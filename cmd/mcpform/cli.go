package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/lock"
)

// parseArgs parses args into fs with flags and arguments in any order, as
// terraform and cobra do: `client-config github -client vscode` sets
// -client rather than naming a server "-client". A "--" ends the flags:
// everything after it is an argument, even when it starts with "-".
// Afterwards fs.Args() holds the arguments in the order given.
func parseArgs(fs *flag.FlagSet, args []string) error {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		rest := fs.Args()
		if endedByDashes(fs, args[:len(args)-len(rest)]) {
			pos = append(pos, rest...)
			break
		}
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	// Parsing "--" and the arguments sets no flag and leaves fs.Args() as
	// pos: the flag package has no other way to set them.
	return fs.Parse(append([]string{"--"}, pos...))
}

// endedByDashes reports whether the flags fs.Parse consumed ended with the
// "--" terminator rather than with a flag's value that happens to be "--"
// (`import -o --`).
func endedByDashes(fs *flag.FlagSet, consumed []string) bool {
	for i := 0; i < len(consumed); i++ {
		tok := consumed[i]
		if tok == "--" {
			return i == len(consumed)-1
		}
		if takesValue(fs, tok) {
			i++
		}
	}
	return false
}

// takesValue reports whether tok is a flag whose value is the next
// argument: "-out" but not "-out=FILE", "-json" or "-json=false".
func takesValue(fs *flag.FlagSet, tok string) bool {
	name := strings.TrimPrefix(strings.TrimPrefix(tok, "-"), "-")
	if strings.Contains(name, "=") {
		return false
	}
	f := fs.Lookup(name)
	if f == nil {
		return false
	}
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return false
	}
	return true
}

// newFlagSet returns the flag set of the command name, writing to stderr.
// Its usage, printed for -h and after a flag it cannot parse, is usage
// (the synopsis lines and what the command does, each line ending in a
// newline) then, when the command has flags, a blank line and the flags
// with their defaults: every command's help has that one shape, which
// completion and the README test read.
func newFlagSet(name string, stderr io.Writer, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		io.WriteString(stderr, usage)
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprintln(stderr)
			fs.PrintDefaults()
		}
	}
	return fs
}

// withFlags is a command's run function from its two halves: parse, which
// turns the arguments into the command's flags struct (and says on stderr
// what is wrong with them), and run, which does the work with that struct.
// A command line that does not parse ends with parseFailed's code.
func withFlags[F any](parse func([]string, io.Writer) (F, error), run func(context.Context, *stdio, F) int) func(context.Context, *stdio, []string) int {
	return func(ctx context.Context, io *stdio, args []string) int {
		f, err := parse(args, io.err)
		if err != nil {
			return parseFailed(err)
		}
		return run(ctx, io, f)
	}
}

// parseFailed is a command's exit code when its command line did not
// parse: the parser has said why on stderr. -h is not a failure (the usage
// it printed is what was asked for); anything else is a usage error.
func parseFailed(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	return exitUsage
}

// fail prints err as an "Error: " line on stderr and returns exitError:
// the ending of every command that cannot go on.
func fail(io *stdio, err error) int {
	fmt.Fprintf(io.err, "Error: %v\n", err)
	return exitError
}

// usageFailure reports a usage error the flag package cannot see (a
// missing or extra argument, flags that exclude each other): the message on
// stderr, then the command's usage. The caller exits with exitUsage.
func usageFailure(fs *flag.FlagSet, stderr io.Writer, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	fmt.Fprintf(stderr, "%s\n\n", msg)
	fs.Usage()
	return fmt.Errorf("usage: %s", msg)
}

// isHelpFlag reports whether arg asks for help.
func isHelpFlag(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help"
}

// wantsHelp reports whether a command's arguments ask for its help: -h,
// -help or --help anywhere before "--", wherever the other flags and
// arguments are (terraform's command line does the same).
func wantsHelp(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if isHelpFlag(a) {
			return true
		}
	}
	return false
}

// subcommandWords are the commands whose first argument picks a
// subcommand with a usage of its own: `help taint reset` and
// `taint reset -h` print reset's.
var subcommandWords = map[string][]string{
	"taint": {"list", "reset"},
	"audit": {"verify"},
}

// runHelp prints the help of the command name (of its subcommand when
// words start with one) on stdout and exits 0: `help plan`, `plan -h` and
// `plan --help` print the same thing. The command prints its own usage for
// -h; a command that parses no flags gets its synopsis.
func runHelp(ctx context.Context, io *stdio, name string, words []string) int {
	cmd, ok := commands[name]
	if !ok {
		return unknownCommand(io, name)
	}
	args := []string{"-h"}
	if len(words) > 0 {
		for _, w := range subcommandWords[name] {
			if words[0] == w {
				args = []string{w, "-h"}
			}
		}
	}
	var buf bytes.Buffer
	hio := &stdio{in: strings.NewReader(""), out: &buf, err: &buf, getenv: io.getenv, environ: io.environ}
	cmd.run(ctx, hio, args)
	if !strings.HasPrefix(buf.String(), "Usage:") {
		// The command printed no usage (it takes no flags and ignored
		// -h): what it printed is not help.
		buf.Reset()
		fmt.Fprintf(&buf, "Usage: mcpform %s\n\n%s.\n", name, strings.TrimSuffix(cmd.synopsis, "."))
	}
	io.out.Write(buf.Bytes())
	return exitOK
}

// unknownCommand reports a command name that is not in the table, with the
// closest one, as a usage error.
func unknownCommand(io *stdio, name string) int {
	fmt.Fprintf(io.err, "mcpform: unknown command %q\n", name)
	if s := suggest(name, commandNames()); s != "" {
		fmt.Fprintf(io.err, "Did you mean %q?\n", s)
	}
	fmt.Fprintln(io.err, "Run \"mcpform help\" for the list of commands.")
	return exitUsage
}

// lockedServer returns the entry of server name in lf, or tells stderr
// (as command) that the lock at path has no such server, with the nearest
// name and the names it has.
func lockedServer(io *stdio, command string, lf *lock.File, name, path string) (*lock.Entry, bool) {
	if e, ok := lf.Servers[name]; ok {
		return e, true
	}
	names := make([]string, 0, len(lf.Servers))
	for n := range lf.Servers {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(io.err, "%s: server %q is not in %s", command, escape.String(name), path)
	if s := suggest(name, names); s != "" {
		fmt.Fprintf(io.err, "; did you mean %q?", s)
	}
	fmt.Fprintf(io.err, "\nIt holds: %s. To add a server, declare it in mcp.hcl, then run mcpform plan and mcpform apply.\n", strings.Join(names, ", "))
	return nil, false
}
