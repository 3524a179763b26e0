package onboard

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var testLaunches = Launches("/usr/local/bin/mcpform", "/home/alice/team/mcp.lock", []string{"everything", "github", "team.notes"})

// TestSnippetGolden compares the printed configuration of every client with
// testdata/clientconfig/<client>.json.
func TestSnippetGolden(t *testing.T) {
	for _, c := range Clients {
		t.Run(string(c), func(t *testing.T) {
			got := Snippet(c, testLaunches)
			if !json.Valid(got) {
				t.Fatalf("not JSON:\n%s", got)
			}
			golden(t, filepath.Join("testdata", "clientconfig", string(c)+".json"), got)
		})
	}
}

// TestMergeKeepsTheRest merges into a real Claude Desktop file: the other
// keys, the other server and the replaced entry's env stay; numbers stay as
// written.
func TestMergeKeepsTheRest(t *testing.T) {
	current, err := os.ReadFile("testdata/clientconfig/claude_desktop_config.json")
	if err != nil {
		t.Fatal(err)
	}
	got, err := Merge(ClaudeDesktop, current, testLaunches)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "testdata/clientconfig/claude_desktop_config.merged.json", got)

	var v struct {
		GlobalShortcut string
		Preferences    map[string]any
		MCPServers     map[string]struct {
			Command string
			Args    []string
			Env     map[string]string
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(got, &v); err != nil {
		t.Fatal(err)
	}
	if v.GlobalShortcut != "Cmd+Shift+Space" || v.Preferences["zoom"] != 1.25 {
		t.Errorf("other keys lost: %+v", v)
	}
	if fs := v.MCPServers["filesystem"]; fs.Command != "npx" {
		t.Errorf("a server not in the lock was changed: %+v", fs)
	}
	gh := v.MCPServers["github"]
	if diff := cmp.Diff([]string{"run", "-lock", "/home/alice/team/mcp.lock", "github"}, gh.Args); diff != "" || gh.Command != "/usr/local/bin/mcpform" {
		t.Errorf("github not replaced: %+v", gh)
	}
	if gh.Env["GITHUB_PERSONAL_ACCESS_TOKEN"] != "ghp_kept_where_it_was" {
		t.Errorf("the replaced entry's env was lost: %+v", gh.Env)
	}
	if !strings.Contains(string(got), `"zoom": 1.25`) {
		t.Error("a number was rewritten")
	}

	// Merging again changes nothing.
	again, err := Merge(ClaudeDesktop, got, testLaunches)
	if err != nil {
		t.Fatal(err)
	}
	if d := Diff("a", "b", got, again); d != "" {
		t.Errorf("a second merge changed the file:\n%s", d)
	}
}

func TestMergeNewAndInvalid(t *testing.T) {
	got, err := Merge(VSCode, nil, testLaunches[:1])
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(Snippet(VSCode, testLaunches[:1])), string(got)); diff != "" {
		t.Errorf("a new file should be the snippet (-want +got):\n%s", diff)
	}
	for _, tc := range []struct{ in, want string }{
		{"{\n  // mine\n  \"servers\": {}\n}", "comments or trailing commas"},
		{`{"servers": {},}`, "comments or trailing commas"},
		{`{"servers": [`, "reading the client configuration"},
		{`{"servers": []}`, `reading "servers"`},
	} {
		if _, err := Merge(VSCode, []byte(tc.in), testLaunches); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Merge(%q) = %v, want an error containing %q", tc.in, err, tc.want)
		}
	}
}

func TestDiff(t *testing.T) {
	a := []byte("a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n")
	b := []byte("a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nk\n")
	want := `--- old
+++ new
@@ -1,5 +1,5 @@
 a
-b
+B
 c
 d
 e
@@ -8,3 +8,4 @@
 h
 i
 j
+k
`
	if diff := cmp.Diff(want, Diff("old", "new", a, b)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if Diff("a", "b", a, a) != "" {
		t.Error("equal inputs gave a diff")
	}
}

func TestBypassing(t *testing.T) {
	current, err := os.ReadFile("testdata/clientconfig/claude_desktop_config.json")
	if err != nil {
		t.Fatal(err)
	}
	merged, err := Merge(ClaudeDesktop, current, testLaunches)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"filesystem"}, Bypassing(ClaudeDesktop, merged)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := Bypassing(VSCode, []byte(`{"servers": {"a": {"command": "C:\\bin\\mcpform.exe", "args": ["run", "a"]}, "b": {"url": "https://x"}}}`)); !cmp.Equal(got, []string{"b"}) {
		t.Errorf("got %q", got)
	}
}
