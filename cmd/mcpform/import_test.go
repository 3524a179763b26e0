package main

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseImportFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *importFlags // nil: a usage error
	}{
		{nil, &importFlags{out: "mcp.hcl"}},
		{[]string{"-o", "-", "x.json"}, &importFlags{out: "-", file: "x.json"}},
		{[]string{"-force", "-client", "cursor", "-o", "team.hcl"}, &importFlags{out: "team.hcl", force: true, client: "cursor"}},
		{[]string{"a.json", "b.json"}, nil},
		{[]string{"-client", "emacs"}, nil},
		{[]string{"-nope"}, nil},
	} {
		got, err := parseImportFlags(tc.args, new(bytes.Buffer))
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
		if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(importFlags{})); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tc.args, diff)
		}
	}
}
