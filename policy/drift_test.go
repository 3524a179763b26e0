package policy

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestGlobMatch(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"search", "search", true},
		{"search", "search2", false},
		{"search", "Search", false},
		{"get_*", "get_", true},
		{"get_*", "get_issue", true},
		{"get_*", "xget_issue", false},
		{"*", "", true},
		{"*", "anything/at/all", true},
		{"*_issue", "get_issue", true},
		{"*_issue", "get_issues", false},
		{"a*b*c", "abc", true},
		{"a*b*c", "a-b-b-c", true},
		{"a*b*c", "a-b-c-d", false},
		{"?", "é", true}, // one rune, two bytes
		{"?", "ab", false},
		{"get_?", "get_x", true},
		{"get_?", "get_", false},
		{"file:///*", "file:///etc/passwd", true}, // "/" is no separator
		{"file:///*.md", "file:///a/b.md", true},
		{"[ab]", "a", false}, // no classes: "[" is itself
		{"[ab]", "[ab]", true},
		{`a\*`, `a\x`, true}, // no escapes: "\" is itself
		{"**", "x", true},
		{"*a", "aaaa", true},
		{"é*", "éa", true},
	}
	for _, tt := range tests {
		if got := Match(tt.pattern, tt.name); got != tt.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}

func TestExposes(t *testing.T) {
	if !Exposes(nil, "x") {
		t.Error("a nil list must expose every item")
	}
	if Exposes([]string{}, "x") {
		t.Error("an empty list must expose nothing")
	}
	if !Exposes([]string{"a", "x*"}, "xy") || Exposes([]string{"a", "x*"}, "b") {
		t.Error("a list exposes what one of its patterns matches, only that")
	}
}

func TestCheckOnDrift(t *testing.T) {
	for _, ok := range []string{"", "quarantine", "block-changed", "insecure-warn"} {
		if err := CheckOnDrift(ok); err != nil {
			t.Errorf("CheckOnDrift(%q): %v", ok, err)
		}
	}
	for bad, want := range map[string]string{"warn": `written "insecure-warn"`, "Quarantine": "not", "block": "not"} {
		if err := CheckOnDrift(bad); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckOnDrift(%q) = %v, want an error containing %q", bad, err, want)
		}
	}
	if DriftStrength("") != 0 || DriftStrength(DriftQuarantine) != 0 || DriftStrength(DriftBlockChanged) != 1 || DriftStrength(DriftInsecureWarn) != 2 {
		t.Error("DriftStrength orders quarantine < block-changed < insecure-warn")
	}
}

// TestExposeJSON: an unset list stays unset and an empty one empty through
// the lock's JSON; null, unknown keys and non-lists are refused.
func TestExposeJSON(t *testing.T) {
	x := Expose{Tools: []string{"a*"}, Prompts: []string{}}
	b, err := json.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"prompts":[],"tools":["a*"]}` {
		t.Errorf("Marshal = %s", b)
	}
	var back Expose
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Resources != nil || back.Prompts == nil || len(back.Prompts) != 0 || len(back.Tools) != 1 {
		t.Errorf("round trip = %#v", back)
	}
	for _, bad := range []string{`{"tools":null}`, `{"tool":[]}`, `{"tools":"a"}`, `{"tools":[1]}`, `[]`, `null`} {
		var x Expose
		if err := json.Unmarshal([]byte(bad), &x); err == nil {
			t.Errorf("Unmarshal(%s) accepted: %#v", bad, x)
		}
	}
	for bad, want := range map[string]Expose{
		"cannot be empty":   {Tools: []string{""}},
		"listed twice":      {Resources: []string{"a", "a"}},
		"control character": {Prompts: []string{"a\nb"}},
	} {
		if err := want.Check(); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("Check(%#v) = %v, want %q", want, err, bad)
		}
	}
}

// FuzzMatch: the matcher never panics, a name always matches itself when
// it holds no wildcard, and "*" matches everything.
func FuzzMatch(f *testing.F) {
	for _, s := range [][2]string{{"get_*", "get_x"}, {"a*b?c", "aXbYc"}, {"*", ""}, {"?", "\xff"}, {"é?*", "éé"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		got := Match(pattern, name)
		if !strings.ContainsAny(pattern, "*?") && got != (pattern == name) {
			t.Fatalf("Match(%q, %q) = %v for a literal pattern", pattern, name, got)
		}
		if !Match("*", name) {
			t.Fatalf("* does not match %q", name)
		}
		if !strings.ContainsAny(name, "*?") && !Match(name, name) {
			t.Fatalf("%q does not match itself", name)
		}
	})
}
