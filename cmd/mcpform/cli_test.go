package main

import (
	"bytes"
	"flag"
	"io"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpform/mcpform/lock"
	"github.com/mcpform/mcpform/runtime"
)

// TestParseArgsInterspersed: flags may follow arguments, as in terraform
// and cobra; "--" ends the flags, unless it is a flag's value.
func TestParseArgsInterspersed(t *testing.T) {
	type got struct {
		Client, Out string
		JSON        bool
		Args        []string
	}
	for _, tc := range []struct {
		args []string
		want got
	}{
		{[]string{"github", "-client", "vscode"}, got{Client: "vscode", Args: []string{"github"}}},
		{[]string{"-client=vscode", "github", "memory", "-json"}, got{Client: "vscode", JSON: true, Args: []string{"github", "memory"}}},
		{[]string{"a", "-json=false", "b", "--client", "cursor", "c"}, got{Client: "cursor", Args: []string{"a", "b", "c"}}},
		{[]string{"a", "--", "-json", "-client", "x"}, got{Args: []string{"a", "-json", "-client", "x"}}},
		{[]string{"-o", "--", "a", "-json"}, got{Out: "--", JSON: true, Args: []string{"a"}}},
		{[]string{"-", "-json"}, got{JSON: true, Args: []string{"-"}}},
		{[]string{"--"}, got{Args: []string{}}},
		{nil, got{Args: []string{}}},
	} {
		var g got
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.StringVar(&g.Client, "client", "", "")
		fs.StringVar(&g.Out, "o", "", "")
		fs.BoolVar(&g.JSON, "json", false, "")
		if err := parseArgs(fs, tc.args); err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		g.Args = fs.Args()
		if diff := cmp.Diff(tc.want, g); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tc.args, diff)
		}
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if err := parseArgs(fs, []string{"a", "-nope"}); err == nil {
		t.Error("an unknown flag after an argument parsed")
	}
}

// parseCase is one row of a command's flag table: a command line and the
// plain struct it parses into, or wantErr for a usage error.
type parseCase[F any] struct {
	args    []string
	want    F
	wantErr bool
}

// testParse runs a command's parse function over its table. A usage error
// must say why on stderr; a command line that parses must give exactly the
// struct wanted, unexported fields and all.
func testParse[F any](t *testing.T, parse func([]string, io.Writer) (F, error), cases []parseCase[F]) {
	t.Helper()
	for _, tc := range cases {
		var stderr bytes.Buffer
		got, err := parse(tc.args, &stderr)
		if (err != nil) != tc.wantErr {
			t.Errorf("%q: error %v, want error %v", tc.args, err, tc.wantErr)
			continue
		}
		if tc.wantErr {
			if stderr.Len() == 0 {
				t.Errorf("%q: a usage error, and nothing on stderr says why", tc.args)
			}
			continue
		}
		if diff := cmp.Diff(tc.want, got, cmp.Exporter(func(reflect.Type) bool { return true })); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tc.args, diff)
		}
	}
}

func TestParseRunFlags(t *testing.T) {
	testParse(t, parseRunFlags, []parseCase[runFlags]{
		{args: []string{"notes"}, want: runFlags{lockPath: lock.DefaultPath, spin: runtime.DefaultSpin, name: "notes"}},
		{args: []string{"-lock", "/x/mcp.lock", "-audit", "/x/a.jsonl", "-spin", "0", "notes"}, want: runFlags{lockPath: "/x/mcp.lock", auditPath: "/x/a.jsonl", name: "notes"}},
		{args: []string{"notes", "-explain-sandbox"}, want: runFlags{lockPath: lock.DefaultPath, spin: runtime.DefaultSpin, explainSandbox: true, name: "notes"}},
		{args: nil, wantErr: true},
		{args: []string{"a", "b"}, wantErr: true},
		{args: []string{"-spin", "2ms", "notes"}, wantErr: true},
		{args: []string{"-nope", "notes"}, wantErr: true},
	})
}

func TestParseAuditFlags(t *testing.T) {
	testParse(t, parseAuditFlags, []parseCase[auditFlags]{
		{args: []string{"verify"}, want: auditFlags{}},
		{args: []string{"verify", "/x/audit.jsonl"}, want: auditFlags{path: "/x/audit.jsonl"}},
		{args: nil, wantErr: true},
		{args: []string{"check"}, wantErr: true},
		{args: []string{"verify", "a", "b"}, wantErr: true},
	})
}

func TestParseSuggestPolicyFlags(t *testing.T) {
	testParse(t, parseSuggestPolicyFlags, []parseCase[suggestPolicyFlags]{
		{args: []string{"notes"}, want: suggestPolicyFlags{lockPath: lock.DefaultPath, name: "notes"}},
		{args: []string{"notes", "-lock", "/x/mcp.lock"}, want: suggestPolicyFlags{lockPath: "/x/mcp.lock", name: "notes"}},
		{args: nil, wantErr: true},
		{args: []string{"a", "b"}, wantErr: true},
	})
}
