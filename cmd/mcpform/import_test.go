package main

import (
	"testing"
)

func TestParseImportFlags(t *testing.T) {
	testParse(t, parseImportFlags, []parseCase[importFlags]{
		{args: nil, want: importFlags{out: "mcp.hcl"}},
		{args: []string{"-o", "-", "x.json"}, want: importFlags{out: "-", file: "x.json"}},
		{args: []string{"-force", "-client", "cursor", "-o", "team.hcl"}, want: importFlags{out: "team.hcl", force: true, client: "cursor"}},
		{args: []string{"a.json", "b.json"}, wantErr: true},
		{args: []string{"-client", "emacs"}, wantErr: true},
		{args: []string{"-nope"}, wantErr: true},
	})
}
