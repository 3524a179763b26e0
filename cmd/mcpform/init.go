package main

import (
	"context"
	"fmt"
	"io"

	"github.com/mcpform/mcpform/lang"
)

// initFlags is mcpform init's command line.
type initFlags struct {
	upgrade bool
	noColor bool
	dir     string
}

func parseInitFlags(args []string, stderr io.Writer) (initFlags, error) {
	var f initFlags
	fs := newFlagSet("init", stderr, fmt.Sprintf(`Usage: mcpform init [-upgrade] [-no-color] [DIR]

Fetches the git modules of the configuration in DIR (default .) into %s and
records the source, ref and commit of each in %s, so that plan and
validate work offline. Local modules need no init.
`, lang.ModulesDir, lang.ManifestFile))
	fs.BoolVar(&f.upgrade, "upgrade", false, "fetch every git module again, even if already fetched")
	fs.BoolVar(&f.noColor, "no-color", false, "never colour the output")
	if err := parseArgs(fs, args); err != nil {
		return f, err
	}
	var err error
	f.dir, err = optionalArg(fs, stderr, ".", "a directory")
	return f, err
}

func runInit(ctx context.Context, io *stdio, f initFlags) int {
	fmt.Fprintln(io.out, "Initializing modules...")
	entries, files, diags := lang.InstallModules(ctx, f.dir, lang.InstallOptions{Upgrade: f.upgrade, Log: io.out})
	if len(diags) > 0 {
		lang.WriteDiagnostics(io.err, diags, files, useColor(io, io.err, f.noColor), 0)
	}
	if diags.HasErrors() {
		return exitError
	}
	if len(entries) == 0 {
		fmt.Fprintln(io.out, "No git modules to fetch.")
	}
	fmt.Fprintln(io.out, "\nmcpform has been successfully initialized!")
	return exitOK
}
