package main

import (
	"testing"
)

func TestParseInitFlags(t *testing.T) {
	testParse(t, parseInitFlags, []parseCase[initFlags]{
		{args: nil, want: initFlags{dir: "."}},
		{args: []string{"-upgrade", "-no-color", "sub"}, want: initFlags{upgrade: true, noColor: true, dir: "sub"}},
		{args: []string{"a", "b"}, wantErr: true},
		{args: []string{"-get=false"}, wantErr: true},
	})
}
