package main

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseCompletionFlags(t *testing.T) {
	testParse(t, parseCompletionFlags, []parseCase[completionFlags]{
		{args: []string{"bash"}, want: completionFlags{shell: "bash", lock: "mcp.lock"}},
		{args: []string{"zsh"}, want: completionFlags{shell: "zsh", lock: "mcp.lock"}},
		{args: []string{"-servers", "-lock", "x.lock"}, want: completionFlags{servers: true, lock: "x.lock"}},
		{args: nil, wantErr: true},
		{args: []string{"fish"}, wantErr: true},
		{args: []string{"bash", "zsh"}, wantErr: true},
		{args: []string{"-servers", "bash"}, wantErr: true},
	})
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
