package main

import (
	"strings"
	"testing"
)

// TestSuggestEnv: one suggestion, within two edits, never a name the
// server lists already, never for a name shorter than the distance.
func TestSuggestEnv(t *testing.T) {
	set := []string{"GITHUB_TOKEN", "HOME", "PATH", "PS", "TERM"}
	for _, tc := range []struct {
		name   string
		listed []string
		want   string
	}{
		{"GITHUB_TOKNE", nil, "GITHUB_TOKEN"},
		{"GITHUB_TOKN", nil, "GITHUB_TOKEN"},
		{"GH_TOKEN", nil, ""},
		{"TZ", nil, ""},
		{"HOEM", nil, "HOME"},
		{"HOEM", []string{"HOME"}, ""},
	} {
		if got := suggestEnv(tc.name, set, tc.listed); got != tc.want {
			t.Errorf("suggestEnv(%q, %q) = %q, want %q", tc.name, tc.listed, got, tc.want)
		}
	}
}

// TestWarnUnsetEnv: a server's unset names share one warning; a name close
// to one that is set gets its own line with the suggestion; a set name
// draws nothing.
func TestWarnUnsetEnv(t *testing.T) {
	env := map[string]string{"HOME": "/h", "MY_TOKEN": "x"}
	var errOut strings.Builder
	io := &stdio{err: &errOut, getenv: func(k string) string { return env[k] },
		environ: func() []string { return []string{"HOME=/h", "MY_TOKEN=x"} }}
	warnUnsetEnv(io, []serverEnv{
		{"notes", []string{"HOME", "GOPATH", "GOCACHE", "GOFLAGS"}},
		{"api", []string{"MY_TOKNE", "TZ"}},
		{"quiet", []string{"HOME"}},
	}, "probed")
	want := `Warning: server "notes": GOPATH, GOCACHE and GOFLAGS are listed in env but not set; probed without them
Warning: server "api": MY_TOKNE is listed in env but not set; probed without it. Did you mean MY_TOKEN, which is set?
Warning: server "api": TZ is listed in env but not set; probed without it
`
	if got := errOut.String(); got != want {
		t.Errorf("warnings:\n%s\nwant:\n%s", got, want)
	}
}
