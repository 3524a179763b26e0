package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/lang"
	"github.com/mcpform/mcpform/onboard"
)

type importFlags struct {
	out    string
	force  bool
	client string
	file   string
}

func parseImportFlags(args []string, stderr io.Writer) (importFlags, error) {
	var f importFlags
	fs := newFlagSet("import", stderr, `Usage: mcpform import [-o FILE] [-force] [-client NAME] [FILE]

Reads an MCP client's configuration (Claude Desktop, Claude Code .mcp.json, VS Code
.vscode/mcp.json, Cursor .cursor/mcp.json) and writes the equivalent mcp.hcl: one server
block per stdio server, environment variable names only (values are never copied), and
one per HTTP or SSE server, its url and fixed headers without any credential (a Bearer
token becomes auth { bearer_env = "NAME" }, the variable to read it from).
Warnings on stderr name what to fix: unpinned npx/uvx packages, relative and Windows
paths, credentials left out, urls mcp.hcl refuses (http to a remote host), renamed servers.

With no FILE it reads the first of ./.mcp.json, ./.vscode/mcp.json, ./.cursor/mcp.json,
Claude Desktop's claude_desktop_config.json and ~/.cursor/mcp.json that exists.
It writes ./mcp.hcl and never overwrites an existing file without -force.
`)
	fs.StringVar(&f.out, "o", lang.ConfigFile, `where to write the mcp.hcl; "-" prints it`)
	fs.BoolVar(&f.force, "force", false, "overwrite the output file if it exists")
	fs.StringVar(&f.client, "client", "", "the client whose configuration to read: claude, claude-code, vscode or cursor (default: any client's usual file; for FILE, from its name and keys)")
	if err := parseArgs(fs, args); err != nil {
		return f, err
	}
	var err error
	if f.file, err = optionalArg(fs, stderr, "", "a client configuration file"); err != nil {
		return f, err
	}
	if f.client != "" {
		if _, err := onboard.ParseClient(f.client); err != nil {
			fmt.Fprintf(stderr, "mcpform import: -client: %v\n", err)
			return f, err
		}
	}
	return f, nil
}

func runImport(_ context.Context, io *stdio, f importFlags) int {
	if f.out != "-" && !f.force {
		if _, err := os.Lstat(f.out); err == nil {
			fmt.Fprintf(io.err, "Error: %s already exists: mcpform import never overwrites it. Use -force to replace it, or -o - to print the result.\n", f.out)
			return exitError
		}
	}
	env := machineEnv(io)
	path, client := f.file, onboard.Client(f.client)
	if path == "" {
		var found []onboard.Location
		locs := onboard.Locations(env)
		if client != "" {
			// -client without FILE: only that client's files.
			var mine []onboard.Location
			for _, l := range locs {
				if l.Client == client {
					mine = append(mine, l)
				}
			}
			locs = mine
		}
		for _, l := range locs {
			if st, err := os.Stat(l.Path); err == nil && !st.IsDir() {
				found = append(found, l)
			}
		}
		if len(found) == 0 {
			fmt.Fprintln(io.err, "Error: no MCP client configuration found. Looked for:")
			for _, l := range locs {
				fmt.Fprintf(io.err, "  %-16s %s\n", l.Client.Title(), display(l.Path, env))
			}
			fmt.Fprintln(io.err, "Pass the file to import: mcpform import FILE")
			return exitError
		}
		path = found[0].Path
		client = found[0].Client
		fmt.Fprintf(io.err, "Reading %s's configuration from %s\n", client.Title(), display(path, env))
		for _, l := range found[1:] {
			fmt.Fprintf(io.err, "  (also found %s's %s: mcpform import %s)\n", l.Client.Title(), display(l.Path, env), display(l.Path, env))
		}
	} else if client == "" {
		client, _ = onboard.DetectClient(path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fail(io, err)
	}
	res, err := onboard.Import(data, onboard.Options{Source: display(path, env), Client: client, RequiredVersion: ">= " + version})
	if err != nil {
		fmt.Fprintf(io.err, "Error: %s: %v\n", display(path, env), err)
		return exitError
	}
	for _, n := range res.Notes {
		fmt.Fprintln(io.err, n.String())
	}
	if f.out == "-" {
		io.out.Write(res.HCL)
		return exitOK
	}
	if err := writeFileAtomic(f.out, res.HCL, 0o644); err != nil {
		fmt.Fprintf(io.err, "Error: writing %s: %v\n", f.out, err)
		return exitError
	}
	fmt.Fprintf(io.err, "Wrote %s with %d server(s)", f.out, len(res.Names))
	if len(res.Names) > 0 {
		fmt.Fprintf(io.err, ": %s", strings.Join(res.Names, ", "))
	}
	fmt.Fprintln(io.err, ".")
	if len(res.Skipped) > 0 {
		// The names are the client file's: escaped, as every untrusted
		// string mcpform prints.
		names := make([]string, len(res.Skipped))
		for i, n := range res.Skipped {
			names[i] = escape.String(n)
		}
		fmt.Fprintf(io.err, "Not imported: %s.\n", strings.Join(names, ", "))
	}
	fmt.Fprintln(io.err, "Next: review it (pin every package), then run mcpform plan.")
	return exitOK
}

// machineEnv is what onboard needs to know about this machine, from the
// environment the tests control.
func machineEnv(io *stdio) onboard.Env {
	dir, _ := os.Getwd()
	home := io.getenv("HOME")
	if runtime.GOOS == "windows" && home == "" {
		home = io.getenv("USERPROFILE")
	}
	return onboard.Env{Home: home, Dir: dir, GOOS: runtime.GOOS, AppData: io.getenv("APPDATA")}
}

// display shortens a path for messages: relative to the working directory
// when under it, ~/… when under the home directory.
func display(path string, env onboard.Env) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	if env.Dir != "" {
		if rel, err := filepath.Rel(env.Dir, abs); err == nil && !strings.HasPrefix(rel, "..") {
			return "." + string(filepath.Separator) + rel
		}
	}
	if env.Home != "" {
		if rel, err := filepath.Rel(env.Home, abs); err == nil && !strings.HasPrefix(rel, "..") {
			return "~" + string(filepath.Separator) + rel
		}
	}
	return path
}

// writeFileAtomic writes data to path through a temporary file in the same
// directory and a rename, so that a crash never leaves half a file.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	if st, err := os.Stat(path); err == nil {
		perm = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
