package main

import "testing"

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
