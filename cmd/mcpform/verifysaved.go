package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/mcpform/mcpform/approval"
	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/lock"
	lockrender "github.com/mcpform/mcpform/lock/render"
	"github.com/mcpform/mcpform/surface"
)

// verifySaved is verify -surface: each server given a saved surface is
// checked against its lock entry, and nothing is started. names are the
// NAME arguments (all the lock's servers when there were none).
func verifySaved(io *stdio, f verifyFlags, lf *lock.File, names []string, approvals *approval.Report) int {
	paths, err := savedSurfaces(f.surfaces, lf, f.names, names)
	if err != nil {
		fail(io, err)
		return exitUsage
	}
	var reports []lockrender.VerifyServer
	for _, name := range sortedKeys(paths) {
		path := paths[name]
		locked := lf.Servers[name]
		rep := lockrender.VerifyServer{Name: name, Surface: path}
		saved, err := surface.ReadSaved(path)
		if err == nil {
			var live *lock.Entry
			if live, err = surface.Overlay(locked, saved); err == nil {
				rep = compareLive(name, locked, live, f.strict)
				rep.Surface = path
			}
		}
		if err != nil {
			// The saved file is as untrusted as a server's answer.
			rep.Status, rep.Error = lockrender.Failed, "the saved surface cannot be read: "+escape.Visible(err.Error())
		}
		reports = append(reports, rep)
	}
	return printVerify(io, f, approvals, reports)
}

// savedSurfaces maps each server to the saved surface -surface gave it.
// An argument is NAME=PATH when NAME is a server of the lock, else a PATH
// (a path may hold "="), which needs exactly one server: the one NAME
// argument, or the lock's only server. NAME arguments beside NAME=PATH
// surfaces are refused: the surfaces name the servers checked.
func savedSurfaces(args []string, lf *lock.File, named, all []string) (map[string]string, error) {
	out := map[string]string{}
	for _, a := range args {
		name, path, ok := strings.Cut(a, "=")
		if _, locked := lf.Servers[name]; !ok || !locked || path == "" {
			if _, err := os.Stat(a); ok && err != nil {
				// Not a file, so a NAME=PATH of a server the lock lacks.
				msg := fmt.Sprintf("-surface %s: the lock has no server %q", a, name)
				if s := suggest(name, all); s != "" {
					msg += fmt.Sprintf("; did you mean %q?", s)
				}
				return nil, errors.New(msg)
			}
			name, path = "", a
		}
		if name == "" {
			switch {
			case len(named) == 1:
				name = named[0]
			case len(named) == 0 && len(all) == 1:
				name = all[0]
			default:
				return nil, fmt.Errorf("-surface %s names no server: write -surface NAME=%s, NAME one of %s", a, a, strings.Join(all, ", "))
			}
		} else if len(named) > 0 && !slices.Contains(named, name) {
			return nil, fmt.Errorf("-surface %s is for a server the NAME arguments leave out; give either NAME=PATH surfaces or NAME arguments", a)
		}
		if prev, dup := out[name]; dup {
			return nil, fmt.Errorf("-surface gives server %q two surfaces, %s and %s: give each server one (a directory holds several lists)", name, prev, path)
		}
		out[name] = path
	}
	return out, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
