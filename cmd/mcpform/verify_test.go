package main

import "testing"

func TestParseVerifyFlags(t *testing.T) {
	testParse(t, parseVerifyFlags, []parseCase[verifyFlags]{
		{args: nil, want: verifyFlags{lock: "mcp.lock", parallelism: 10, names: []string{}}},
		{args: []string{"time", "-lock", "x.lock", "-strict", "-json", "-parallelism", "3", "notes"},
			want: verifyFlags{lock: "x.lock", strict: true, json: true, parallelism: 3, names: []string{"time", "notes"}}},
		{args: []string{"-parallelism", "x"}, wantErr: true},
		{args: []string{"-nope"}, wantErr: true},
	})
}
