package plan

import (
	"fmt"

	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/lang"
	"github.com/mcpform/mcpform/lock"
)

// pinResult is what pins.Compute said of a command server before its probe.
type pinResult struct {
	pins *lock.Pins
	err  error
}

// oldPins are the locked entry's pins; nil for a new server or an entry
// locked before pins existed.
func oldPins(old *lock.Entry) *lock.Pins {
	if old == nil || old.Mcpform == nil {
		return nil
	}
	return old.Mcpform.Pins
}

// keepMoved keeps the locked record of a file that moved without changing
// (another path on PATH, the same bytes): run compares digests, not paths,
// so it is the same pin, and the lock is left as it was.
func keepMoved(live, old *lock.Pins) *lock.Pins {
	if live == nil || old == nil {
		return live
	}
	out := *live
	if old.Executable != nil && live.Executable != nil && old.Executable.SHA256 == live.Executable.SHA256 {
		out.Executable = old.Executable
	}
	if old.Script != nil && live.Script != nil && old.Script.SHA256 == live.Script.SHA256 {
		out.Script = old.Script
	}
	return &out
}

// pinChanges compares the locked pins with the live ones: each file that is
// another (PKG-…-CHANGED), pinned for the first time (PKG-…-ADDED) or no
// longer pinned (PKG-SCRIPT-REMOVED). The values are the pin records, so
// every format shows path and digest on each side.
func pinChanges(addr string, old, live *lock.Pins) []Change {
	if old == nil {
		old = &lock.Pins{}
	}
	if live == nil {
		live = &lock.Pins{}
	}
	var out []Change
	for _, f := range []struct {
		id, field  string
		before, at *lock.FilePin
	}{
		{"EXECUTABLE", "executable", old.Executable, live.Executable},
		{"SCRIPT", "script", old.Script, live.Script},
	} {
		c := Change{Addr: addr + ".pins." + f.field}
		switch {
		case f.before == nil && f.at == nil:
			continue
		case f.before == nil:
			c.Action, c.Rule, c.After = Create, "PKG-"+f.id+"-ADDED", mustJSON(f.at)
			c.Detail = fmt.Sprintf("%s pinned for the first time: sha256 %s", escape.String(f.at.Path), f.at.SHA256)
		case f.at == nil:
			if f.id != "SCRIPT" {
				continue // a command server always pins its executable
			}
			c.Action, c.Rule, c.Before = Delete, "PKG-SCRIPT-REMOVED", mustJSON(f.before)
			c.Detail = fmt.Sprintf("%s is no longer a script the command runs; run will check the executable alone", escape.String(f.before.Path))
		case f.before.SHA256 == f.at.SHA256:
			continue // moved, unchanged: keepMoved kept the locked record
		default:
			c.Action, c.Rule, c.Before, c.After = Update, "PKG-"+f.id+"-CHANGED", mustJSON(f.before), mustJSON(f.at)
			c.Detail = fmt.Sprintf("%s (sha256 %s…) is now %s (sha256 %s…): another file behind the same command; mcpform run refuses to start it until this is applied",
				escape.String(f.before.Path), f.before.SHA256[:12], escape.String(f.at.Path), f.at.SHA256[:12])
		}
		r, _ := LookupRule(c.Rule)
		c.Class, c.Grade, c.Security = r.Class, r.Grade, r.Security
		out = append(out, c)
	}
	return out
}

// checkExactNPM refuses a server that runs an npm package (npx, npm exec,
// pnpm dlx, bunx) without an exact version: a range or a dist-tag can start
// another release than the one the plan probed. PyPI runners are refused
// the same way by planPyPIServer (plan/pypi.go), with pip's spelling.
func checkExactNPM(s *lang.Server) error {
	u, ok := lang.UnpinnedPackage(s.Command)
	if !ok || u.Python {
		return nil
	}
	return fmt.Errorf("%s package %s has no exact version, so the plan would lock one release and run could start another: write an exact version, command = %s, with VERSION the release you reviewed, such as 1.2.3 (%s); mcpform does not ask the registry",
		u.Runner, escape.String(fmt.Sprintf("%q", u.Spec)), lang.HCLList(u.Fixed), u.Where())
}
