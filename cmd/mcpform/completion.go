package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"
	"text/template"

	"github.com/mcpform/mcpform/lock"
)

type completionFlags struct {
	shell   string
	servers bool
	lock    string
}

func parseCompletionFlags(args []string, stderr io.Writer) (*completionFlags, error) {
	f := &completionFlags{}
	fs := flag.NewFlagSet("completion", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&f.servers, "servers", false, "print the server names in the lock, one a line (the scripts call this)")
	fs.StringVar(&f.lock, "lock", lock.DefaultPath, "the lock -servers reads")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: mcpform completion bash|zsh")
		fmt.Fprintln(stderr, "       mcpform completion -servers [-lock FILE]")
		fmt.Fprintln(stderr, "\nPrints a shell completion script for commands, their flags and, for run, verify, show")
		fmt.Fprintln(stderr, "and client-config, the server names in mcp.lock. Load it with:")
		fmt.Fprintln(stderr, "  bash: source <(mcpform completion bash)    (or save it in /etc/bash_completion.d/mcpform)")
		fmt.Fprintln(stderr, "  zsh:  source <(mcpform completion zsh)")
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	if err := parseArgs(fs, args); err != nil {
		return nil, err
	}
	switch {
	case f.servers && fs.NArg() == 0:
	case !f.servers && fs.NArg() == 1 && (fs.Arg(0) == "bash" || fs.Arg(0) == "zsh"):
		f.shell = fs.Arg(0)
	default:
		fs.Usage()
		return nil, fmt.Errorf("want bash or zsh")
	}
	return f, nil
}

func runCompletion(ctx context.Context, io *stdio, args []string) int {
	f, err := parseCompletionFlags(args, io.err)
	if err != nil {
		return exitUsage
	}
	if f.servers {
		lf, err := lock.Load(f.lock)
		if err != nil {
			return exitError // completion stays quiet: no names to offer
		}
		names := make([]string, 0, len(lf.Servers))
		for n := range lf.Servers {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintln(io.out, n)
		}
		return exitOK
	}
	script, err := completionScript(ctx, f.shell)
	if err != nil {
		fmt.Fprintf(io.err, "Error: %v\n", err)
		return exitError
	}
	io.out.Write(script)
	return exitOK
}

// cmdFlags is what completion and the README test know of one command's
// flags, read from its own -h output so that they cannot drift apart.
type cmdFlags struct {
	Name   string
	Flags  []string // "-lock", "-json", …
	Values []string // the flags that take a value
	// Words are the subcommand words its usage lines start with:
	// "list reset" for "mcpform taint list …" and "mcpform taint reset …".
	Words []string
}

// defaultsLine matches a flag line of flag.PrintDefaults: "  -lock string"
// or "  -json".
var defaultsLine = regexp.MustCompile(`^  (-[A-Za-z0-9][A-Za-z0-9_-]*)( \S+)?`)

// table is the commands table for the functions here, which the table
// itself refers to (through runCompletion): Go refuses that cycle in
// variable initialisation, so init sets it afterwards.
var table map[string]command

func init() { table = commands }

func tableNames() []string {
	names := make([]string, 0, len(table))
	for n := range table {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// usageWord matches the first word after the command in a usage line:
// "mcpform taint list [-json]", "mcpform completion bash|zsh".
var usageWord = regexp.MustCompile(`mcpform ([a-z-]+) ([a-z]+(?:\|[a-z]+)*)(?:\s|$)`)

// commandHelp runs a command with -h and returns what it printed.
func commandHelp(ctx context.Context, name string) string {
	var out bytes.Buffer
	io := &stdio{in: strings.NewReader(""), out: &out, err: &out, getenv: func(string) string { return "" }}
	table[name].run(ctx, io, []string{"-h"})
	return out.String()
}

// allCommandFlags returns every command with its flags, by name.
func allCommandFlags(ctx context.Context) []cmdFlags {
	var out []cmdFlags
	for _, name := range tableNames() {
		c := cmdFlags{Name: name}
		for _, line := range strings.Split(commandHelp(ctx, name), "\n") {
			usageLine := strings.HasPrefix(line, "Usage: ") || strings.HasPrefix(strings.TrimSpace(line), "mcpform ")
			if u := usageWord.FindStringSubmatch(line); usageLine && u != nil && u[1] == name {
				for _, w := range strings.Split(u[2], "|") {
					if !slices.Contains(c.Words, w) {
						c.Words = append(c.Words, w)
					}
				}
			}
			m := defaultsLine.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			c.Flags = append(c.Flags, m[1])
			if m[2] != "" {
				c.Values = append(c.Values, m[1])
			}
		}
		out = append(out, c)
	}
	return out
}

// serverCommands are the commands whose arguments are server names.
var serverCommands = []string{"run", "verify", "show", "client-config"}

func completionScript(ctx context.Context, shell string) ([]byte, error) {
	var b bytes.Buffer
	err := completionTmpl.Execute(&b, map[string]any{
		"Shell":    shell,
		"Commands": tableNames(),
		"Flags":    allCommandFlags(ctx),
		"Servers":  serverCommands,
	})
	return b.Bytes(), err
}

var completionTmpl = template.Must(template.New("completion").Funcs(template.FuncMap{"join": strings.Join}).Parse(
	`{{if eq .Shell "zsh"}}#compdef mcpform
# zsh completion for mcpform, generated by "mcpform completion zsh".
# Load it with: source <(mcpform completion zsh)
# It uses zsh's bash completion layer (bashcompinit).
autoload -U +X compinit && compinit
autoload -U +X bashcompinit && bashcompinit
{{else}}# bash completion for mcpform, generated by "mcpform completion bash".
# Load it with: source <(mcpform completion bash)
{{end}}
_mcpform() {
  local cur prev cmd lockfile i flags values words nargs
  cur="${COMP_WORDS[COMP_CWORD]}"
  prev="${COMP_WORDS[COMP_CWORD-1]}"
  cmd=""
  lockfile=""
  nargs=0
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "${COMP_WORDS[i]}" in
      -chdir) ((i++)) ;;
      -lock) [[ -n "$cmd" ]] && lockfile="${COMP_WORDS[i+1]}"; ((i++)) ;;
      -*) ;;
      *) if [[ -z "$cmd" ]]; then cmd="${COMP_WORDS[i]}"; else ((nargs++)); fi ;;
    esac
  done
  if [[ -z "$cmd" ]]; then
    if [[ "$prev" == "-chdir" ]]; then
      COMPREPLY=($(compgen -d -- "$cur"))
    else
      COMPREPLY=($(compgen -W "{{join .Commands " "}} -chdir -version" -- "$cur"))
    fi
    return
  fi
  case "$cmd" in
{{- range .Flags}}
    {{.Name}}) flags="{{join .Flags " "}}"; values="{{join .Values " "}}"; words="{{join .Words " "}}" ;;
{{- end}}
    *) flags=""; values=""; words="" ;;
  esac
  if [[ "$prev" == "-client" ]]; then
    COMPREPLY=($(compgen -W "claude claude-code vscode cursor" -- "$cur"))
    return
  fi
  if [[ -n "$prev" && " $values " == *" $prev "* ]]; then
    COMPREPLY=($(compgen -f -- "$cur"))
    return
  fi
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
    return
  fi
  if [[ -n "$words" && $nargs -eq 0 ]]; then
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
    return
  fi
  case "$cmd" in
    {{join .Servers "|"}})
      COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" completion -servers ${lockfile:+-lock "$lockfile"} 2>/dev/null)" -- "$cur")) ;;
    *)
      COMPREPLY=($(compgen -f -- "$cur")) ;;
  esac
}
complete -F _mcpform mcpform
`))
