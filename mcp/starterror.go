package mcp

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpform/mcpform/internal/escape"
)

// StartError is a server that did not start: it could not be run, it
// exited (or closed its output) before it answered the handshake, or it did
// not answer the handshake in time. It is not drift: nothing of the
// server's surface was seen, so nothing was compared with the lock.
//
// Its message says which of the three it was, with the names of the
// environment variables the server got (never their values), the names its
// env listed that mcpform's own environment does not have, a hint when PATH
// is missing (the usual reason a server started through npx, uvx or a
// "#!/usr/bin/env" script does not start), and the last lines of its
// stderr, escaped.
type StartError struct {
	Server string
	// Stage is the handshake the server did not answer ("initialize",
	// "server/discover"), or "start" when it could not be run at all.
	Stage string
	// Exited is set when the server exited, or closed its output, before
	// it answered; Status is then its exit status ("exit status 3",
	// "signal: killed"), when known.
	Exited bool
	Status string
	// Err is the underlying error: the exec failure, the timeout, the
	// closed connection.
	Err error
	// Stderr is the tail of the server's stderr, unescaped.
	Stderr string
	// Env is the names of the environment variables the server got, in
	// the order its env lists them; Unset the names its env lists that
	// mcpform's environment does not have (so the server did not get them).
	Env, Unset []string
	// Command is the server's argv, for the hint.
	Command []string
	// Refused is set when mcpform itself refused to start the server (its
	// pinned files are not the locked ones): nothing ran, so there is no
	// environment, hint or stderr to tell.
	Refused bool
	// Unreachable is set for a remote server that mcpform could not reach
	// (or whose credentials it refused): no process, environment or
	// stderr either.
	Unreachable bool
}

func (e *StartError) Error() string { return e.Summary() + e.stderrTail() }

// Summary is the error without the server's stderr: the reason, the
// environment and the hint, each on a line of its own. It is what a
// record (the audit log) keeps, since the server's stderr may hold
// anything it printed.
func (e *StartError) Summary() string {
	return fmt.Sprintf("server %q did not start: %s", escape.String(e.Server), e.Reason()) + e.environment()
}

func (e *StartError) Unwrap() error { return e.Err }

// Reason is the one-line account of what went wrong, without the server's
// name: "it exited before it answered initialize: …".
func (e *StartError) Reason() string {
	switch {
	case e.Refused:
		return "mcpform refused to start it: " + errText(e.Err)
	case e.Unreachable:
		return fmt.Sprintf("mcpform could not reach it for %s: %s", e.Stage, errText(e.Err))
	case e.Stage == "start" || e.Stage == "":
		return "it could not be run: " + errText(e.Err)
	case e.Exited:
		r := fmt.Sprintf("it exited before it answered %s: %s", e.Stage, errText(e.Err))
		if e.Status != "" {
			r += " (" + e.Status + ")"
		}
		return r
	default:
		return fmt.Sprintf("it did not answer %s in time: %s", e.Stage, errText(e.Err))
	}
}

// errText is err's message with hidden characters escaped: it may quote a
// path or a server's words.
func errText(err error) string {
	if err == nil {
		return "no error"
	}
	return escape.Visible(err.Error())
}

// Details is what follows the reason, each on a line of its own: the
// environment, the hint, and the stderr tail (or that it was empty).
func (e *StartError) Details() string { return e.environment() + e.stderrTail() }

// environment is the lines of the environment names and the hint.
func (e *StartError) environment() string {
	if e.Refused || e.Unreachable {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nenvironment it got (names only): ")
	b.WriteString(names(e.Env))
	if len(e.Unset) > 0 {
		b.WriteString("\nlisted in env but not set in mcpform's environment, so not passed: ")
		b.WriteString(names(e.Unset))
	}
	if h := e.Hint(); h != "" {
		b.WriteString("\nhint: ")
		b.WriteString(h)
	}
	return b.String()
}

// stderrTail is the lines of the server's stderr tail, escaped, or that it
// was empty.
func (e *StartError) stderrTail() string {
	if e.Refused || e.Unreachable {
		return ""
	}
	var b strings.Builder
	if tail := lastLines(e.Stderr, stderrLines, stderrBytes); tail != "" {
		b.WriteString("\nserver stderr (last lines):")
		for _, l := range strings.Split(tail, "\n") {
			b.WriteString("\n  | ")
			b.WriteString(escape.String(strings.TrimRight(l, "\r")))
		}
	} else {
		b.WriteString("\n(nothing on stderr)")
	}
	return b.String()
}

// launchers need PATH to find their interpreter, and HOME for their cache.
var launchers = []string{"npx", "npm", "node", "uvx", "uv", "pipx", "python", "python3", "bunx", "bun", "deno", "docker"}

// Hint says what to change when the server did not get PATH (or, for a
// launcher such as npx or uvx, HOME); "" when it got both.
func (e *StartError) Hint() string {
	if errors.Is(e.Err, exec.ErrNotFound) {
		// mcpform looked the program up on its own PATH and found
		// nothing: what the server would have got does not matter.
		return ""
	}
	var missing, unset []string
	need := []string{"PATH"}
	if len(e.Command) > 0 && slices.Contains(launchers, filepath.Base(e.Command[0])) {
		need = append(need, "HOME")
	}
	for _, n := range need {
		switch {
		case slices.Contains(e.Env, n):
		case slices.Contains(e.Unset, n):
			unset = append(unset, n)
		default:
			missing = append(missing, n)
		}
	}
	var hints []string
	if len(missing) > 0 {
		hints = append(hints, fmt.Sprintf("%s %s not passed: add %s to env in the server's block of mcp.hcl (a server sees only the variables its env names, and npx, uvx and \"#!/usr/bin/env\" scripts need PATH to find their interpreter)",
			strings.Join(missing, " and "), isAre(missing), quoted(missing)))
	}
	if len(unset) > 0 {
		hints = append(hints, fmt.Sprintf("%s %s listed in env but not set where mcpform runs: a client that starts mcpform may give it a minimal environment; set %s in the client's configuration for mcpform",
			strings.Join(unset, " and "), isAre(unset), strings.Join(unset, " and ")))
	}
	return strings.Join(hints, "; ")
}

func isAre(s []string) string {
	if len(s) == 1 {
		return "is"
	}
	return "are"
}

func quoted(s []string) string {
	q := make([]string, len(s))
	for i, n := range s {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, " and ")
}

func names(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	q := make([]string, len(s))
	for i, n := range s {
		q[i] = escape.String(n)
	}
	return strings.Join(q, ", ")
}
