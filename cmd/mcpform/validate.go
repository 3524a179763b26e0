package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/fatih/color"

	"github.com/mcpform/mcpform/lang"
)

// varFlags collects -var NAME=VALUE and -var-file FILE, for every command
// that evaluates mcp.hcl.
type varFlags struct {
	vars  map[string]string
	files []string
}

// register adds -var and -var-file to fs.
func (v *varFlags) register(fs *flag.FlagSet) {
	fs.Func("var", "set a root variable: -var 'NAME=VALUE' (repeatable)", func(s string) error {
		name, value, ok := strings.Cut(s, "=")
		if !ok || name == "" {
			return fmt.Errorf("want NAME=VALUE, got %q", s)
		}
		if v.vars == nil {
			v.vars = map[string]string{}
		}
		v.vars[name] = value
		return nil
	})
	fs.Func("var-file", "read root variables from an HCL (or .json) file (repeatable)", func(s string) error {
		v.files = append(v.files, s)
		return nil
	})
}

// options is what lang.Load needs from the command line and environment.
func (v *varFlags) options(io *stdio) lang.Options {
	return lang.Options{Vars: v.vars, VarFiles: v.files, Getenv: io.getenv, Version: version,
		// As run finds command[0], for the launcher warning only.
		LookPath: func(prog string) string { return lang.LookPath(prog, io.getenv("PATH")) }}
}

// validateFlags is mcpform validate's command line.
type validateFlags struct {
	json    bool
	noColor bool
	vars    varFlags
	dir     string
}

func parseValidateFlags(args []string, stderr io.Writer) (validateFlags, error) {
	var f validateFlags
	fs := newFlagSet("validate", stderr, `Usage: mcpform validate [-json] [-no-color] [-var NAME=VALUE] [-var-file FILE] [DIR]

Checks mcp.hcl (and *.mcp.hcl) in DIR (default .): syntax, types, references,
modules and policy, evaluating everything as plan would, without starting a server.
Exit status: 0 valid, 1 invalid or a usage error.
`)
	fs.BoolVar(&f.json, "json", false, "print the result as JSON (terraform validate -json's shape)")
	fs.BoolVar(&f.noColor, "no-color", false, "never colour the output")
	f.vars.register(fs)
	if err := parseArgs(fs, args); err != nil {
		return f, err
	}
	var err error
	f.dir, err = optionalArg(fs, stderr, ".", "a directory")
	return f, err
}

func runValidate(_ context.Context, io *stdio, f validateFlags) int {
	// Like terraform validate, without values for the root variables:
	// those not given are unknown, and what depends on them is checked by
	// plan.
	opts := f.vars.options(io)
	opts.Validate = true
	cfg, diags := lang.Load(f.dir, opts)
	if f.json {
		if err := lang.WriteDiagnosticsJSON(io.out, diags, cfg.Files); err != nil {
			fmt.Fprintf(io.err, "mcpform validate: %v\n", err)
			return exitError
		}
		if diags.HasErrors() {
			return exitError
		}
		return exitOK
	}
	colorErr := useColor(io, io.err, f.noColor)
	if len(diags) > 0 {
		if err := lang.WriteDiagnostics(io.err, diags, cfg.Files, colorErr, 0); err != nil {
			fmt.Fprintf(io.err, "mcpform validate: %v\n", err)
			return exitError
		}
	}
	if diags.HasErrors() {
		return exitError
	}
	fmt.Fprintln(io.out, successLine(useColor(io, io.out, f.noColor)))
	return exitOK
}

// successLine is validate's last line, "Success!" in bold green when
// colour is on (decided by useColor, not by fatih/color's look at stdout).
func successLine(colour bool) string {
	success := color.New(color.FgGreen, color.Bold)
	if colour {
		success.EnableColor()
	} else {
		success.DisableColor()
	}
	return success.Sprint("Success!") + " The configuration is valid."
}

// useColor reports whether output to w, the stream about to be written,
// should be coloured: w is a terminal (not merely a character device:
// /dev/null is one), no -no-color, no NO_COLOR (https://no-color.org: set
// and not empty), TERM not "dumb". Ask it for each stream: stdout's answer
// says nothing about stderr's (`plan >/dev/null 2>err.log`).
func useColor(io *stdio, w io.Writer, noColor bool) bool {
	if noColor || io.getenv("NO_COLOR") != "" || io.getenv("TERM") == "dumb" {
		return false
	}
	return isTerminal(w)
}
