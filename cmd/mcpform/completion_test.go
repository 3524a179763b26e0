package main

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseCompletionFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *completionFlags
	}{
		{[]string{"bash"}, &completionFlags{shell: "bash", lock: "mcp.lock"}},
		{[]string{"zsh"}, &completionFlags{shell: "zsh", lock: "mcp.lock"}},
		{[]string{"-servers", "-lock", "x.lock"}, &completionFlags{servers: true, lock: "x.lock"}},
		{nil, nil},
		{[]string{"fish"}, nil},
		{[]string{"bash", "zsh"}, nil},
		{[]string{"-servers", "bash"}, nil},
	} {
		got, err := parseCompletionFlags(tc.args, new(bytes.Buffer))
		if tc.want == nil {
			if err == nil {
				t.Errorf("%q: no error", tc.args)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(completionFlags{})); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tc.args, diff)
		}
	}
}

// TestCommandFlags checks that every command answers -h with its flags in
// flag.PrintDefaults form, which completion and the README reference read.
func TestCommandFlags(t *testing.T) {
	all := allCommandFlags(context.Background())
	if len(all) != len(commands) {
		t.Fatalf("%d commands read, table has %d", len(all), len(commands))
	}
	for _, c := range all {
		switch c.Name {
		case "import":
			if diff := cmp.Diff([]string{"-client", "-force", "-o"}, c.Flags); diff != "" {
				t.Errorf("import flags (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"-client", "-o"}, c.Values); diff != "" {
				t.Errorf("import value flags (-want +got):\n%s", diff)
			}
		case "verify", "show", "run", "client-config":
			if !slices.Contains(c.Flags, "-lock") {
				t.Errorf("%s: no -lock in %q", c.Name, c.Flags)
			}
		}
	}
}
