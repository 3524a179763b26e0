package main

import "testing"

func TestParseShowFlags(t *testing.T) {
	testParse(t, parseShowFlags, []parseCase[showFlags]{
		{args: nil, want: showFlags{lock: "mcp.lock", names: []string{}}},
		{args: []string{"-lock", "x.lock", "-json", "time", "notes"}, want: showFlags{lock: "x.lock", json: true, names: []string{"time", "notes"}}},
		{args: []string{"saved.plan", "-no-color"}, want: showFlags{lock: "mcp.lock", noColor: true, names: []string{"saved.plan"}}},
		{args: []string{"-nope"}, wantErr: true},
	})
}
