package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// runCapture runs mcpform with args and returns its exit code, stdout and
// stderr.
func runCapture(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	io := &stdio{in: strings.NewReader(""), out: &out, err: &errb, getenv: func(string) string { return "" }}
	code := run(context.Background(), args, io)
	return code, out.String(), errb.String()
}

// TestHelpEveryCommand asks every command of the table for its help in
// each way a user types it: each prints the command's own usage on stdout,
// the same text, nothing on stderr, and exits 0.
func TestHelpEveryCommand(t *testing.T) {
	for _, name := range commandNames() {
		t.Run(name, func(t *testing.T) {
			code, want, stderr := runCapture(t, "help", name)
			if code != exitOK || stderr != "" {
				t.Fatalf("mcpform help %s: exit %d, stderr %q", name, code, stderr)
			}
			if !strings.HasPrefix(want, "Usage: mcpform "+name) {
				t.Fatalf("mcpform help %s does not start with its usage:\n%s", name, want)
			}
			for _, args := range [][]string{
				{name, "-h"},
				{name, "-help"},
				{name, "--help"},
				// After other flags and arguments, too.
				{name, "-json", "x", "--help"},
			} {
				code, got, stderr := runCapture(t, args...)
				if code != exitOK || stderr != "" {
					t.Errorf("mcpform %s: exit %d, stderr %q", strings.Join(args, " "), code, stderr)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("mcpform %s differs from mcpform help %s (-help +got):\n%s", strings.Join(args, " "), name, diff)
				}
			}
		})
	}
}

// TestHelpSubcommand: the help of a command's subcommand.
func TestHelpSubcommand(t *testing.T) {
	for _, args := range [][]string{{"help", "taint", "reset"}, {"taint", "reset", "-h"}} {
		code, out, stderr := runCapture(t, args...)
		if code != exitOK || stderr != "" || !strings.HasPrefix(out, "Usage: mcpform taint reset") {
			t.Errorf("mcpform %s: exit %d, stdout %q, stderr %q", strings.Join(args, " "), code, out, stderr)
		}
	}
	code, out, _ := runCapture(t, "help", "taint", "list")
	if code != exitOK || !strings.HasPrefix(out, "Usage: mcpform taint list") || !strings.Contains(out, "-json") {
		t.Errorf("mcpform help taint list: exit %d:\n%s", code, out)
	}
}

// TestHelpGeneral: help without a command lists the commands on stdout;
// no arguments at all is a usage error; an unknown command in help is one
// too, with a suggestion.
func TestHelpGeneral(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}, {"-help"}} {
		code, out, stderr := runCapture(t, args...)
		if code != exitOK || stderr != "" || !strings.Contains(out, "Commands:") {
			t.Errorf("mcpform %s: exit %d, stdout %q, stderr %q", strings.Join(args, " "), code, out, stderr)
		}
	}
	code, out, stderr := runCapture(t)
	if code != exitUsage || exitUsage != 1 || out != "" || !strings.Contains(stderr, "Commands:") {
		t.Errorf("mcpform: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	code, out, stderr = runCapture(t, "help", "plna")
	if code != 1 || out != "" || !strings.Contains(stderr, `Did you mean "plan"?`) {
		t.Errorf("mcpform help plna: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}

// TestHelpAfterDashes: after "--" a -h is an argument, not a help request.
func TestHelpAfterDashes(t *testing.T) {
	code, out, stderr := runCapture(t, "explain", "--", "-h")
	if code != exitError || out != "" || !strings.Contains(stderr, `no rule "-H"`) {
		t.Errorf("mcpform explain -- -h: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}
