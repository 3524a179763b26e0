package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/lock"
	lockrender "github.com/mcpform/mcpform/lock/render"
	"github.com/mcpform/mcpform/plan"
	"github.com/mcpform/mcpform/plan/render"
)

type showFlags struct {
	lock    string
	trust   string
	json    bool
	noColor bool
	names   []string
}

func parseShowFlags(args []string, stderr io.Writer) (showFlags, error) {
	var f showFlags
	fs := newFlagSet("show", stderr, `Usage: mcpform show [-lock FILE] [-json] [NAME...]
       mcpform show [-json] [-no-color] PLANFILE

Prints the reviewed surface pinned in mcp.lock, after verifying its digests. Given a
plan saved by mcpform plan -out (or a lock file), prints that instead, as plan printed
it (-json: as plan -json). A file is told from a server name by its content.
`)
	fs.StringVar(&f.lock, "lock", lock.DefaultPath, "the lock file to show")
	fs.BoolVar(&f.json, "json", false, "print the verified entries (or the saved plan) as JSON")
	fs.BoolVar(&f.noColor, "no-color", false, "never colour the output")
	registerTrust(fs, &f.trust)
	if err := parseArgs(fs, args); err != nil {
		return f, err
	}
	f.names = fs.Args()
	return f, nil
}

func runShow(_ context.Context, io *stdio, f showFlags) int {
	if len(f.names) > 0 {
		switch kind, path := sniffFile(f.names[0]), f.names[0]; {
		case kind == planFile && len(f.names) > 1:
			fmt.Fprintf(io.err, "mcpform show: %s is a saved plan: show takes one plan file and no server names\n", escape.String(path))
			return exitUsage
		case kind == planFile:
			return showPlan(io, path, f)
		case kind == lockFile && len(f.names) == 1:
			// `mcpform show other/mcp.lock`, as `terraform show
			// terraform.tfstate`.
			f.lock, f.names = path, nil
		}
	}
	lf, data, names, err := loadLockServers(f.lock, f.names)
	if err != nil {
		fail(io, err)
		if len(f.names) == 1 && sniffFile(f.names[0]) == otherFile {
			fmt.Fprintf(io.err, "%s is a file, but neither a plan saved by mcpform plan -out nor a lock.\n", escape.String(f.names[0]))
		}
		return exitError
	}
	writeLockNotes(io, lf)
	r, err := lockApprovals(io, f.trust, f.lock, data)
	if err != nil {
		return fail(io, err)
	}
	noteApprovals(io, f.lock, r)
	if f.json {
		sub := &lock.File{Generator: lf.Generator, Servers: map[string]*lock.Entry{}}
		for _, n := range names {
			sub.Servers[n] = lf.Servers[n]
		}
		data, err := lock.Marshal(sub)
		if err != nil {
			return fail(io, err)
		}
		io.out.Write(data)
		return exitOK
	}
	lockrender.Entries(io.out, lf, names)
	return exitOK
}

// showPlan prints a saved plan as plan printed it: the human plan, or with
// -json the plan's JSON form.
func showPlan(io *stdio, path string, f showFlags) int {
	p, err := plan.ReadFile(path)
	if err != nil {
		return fail(io, err)
	}
	if f.json {
		err = render.JSON(io.out, p)
	} else {
		err = render.Human(io.out, p, render.Options{Color: useColor(io, io.out, f.noColor), Errors: io.err, ErrorsColor: useColor(io, io.err, f.noColor)})
	}
	if err != nil {
		return fail(io, err)
	}
	return exitOK
}

// fileKind is what sniffFile found.
type fileKind int

const (
	notAFile  fileKind = iota // no such regular file: a server name
	planFile                  // a plan saved by plan -out
	lockFile                  // an mcp.lock
	otherFile                 // a file that is neither
)

// sniffMax bounds what sniffFile reads: far more than a plan of 1,000
// items a kind for a few servers.
const sniffMax = 256 << 20

// sniffFile tells a saved plan and a lock from a server name and from any
// other file by content, never by the file's name: a plan file is the JSON
// object plan.Save writes (it has config_digest), a lock has
// lockfileVersion. Whether either is valid is for plan.ReadFile and
// lock.Load to say.
func sniffFile(path string) fileKind {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return notAFile
	}
	if st.Size() > sniffMax {
		return otherFile
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return otherFile
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		// A damaged plan is still the plan the user meant: ReadFile says
		// what is wrong with it.
		if bytes.Contains(data[:min(len(data), 512)], []byte(`"format_version"`)) {
			return planFile
		}
		return otherFile
	}
	if _, ok := top["config_digest"]; ok {
		return planFile
	}
	if _, ok := top["lockfileVersion"]; ok {
		return lockFile
	}
	return otherFile
}

// quoteAll quotes argv elements that a reader could misread unquoted, as
// show prints a command (lock/render.QuoteArgv).
func quoteAll(argv []string) []string { return lockrender.QuoteArgv(argv) }
