package onboard

import (
	"bytes"
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
		{`{"servers": [`, "reading the client configuration"},
		{`{"servers": []}`, `reading "servers"`},
		{`{"servers": {"a": {}, "a": {}}}`, `reading "servers": key "a" appears twice`},
		{"{\n  \"servers\": {} /* open\n}", "reading the client configuration: line 2"},
		{"\xff\xfe{\x00}\x00", "UTF-16"},
		{`{"servers": {}} {}`, "data after the JSON object"},
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

// TestMergeJSONC merges into a VS Code mcp.json with line and block
// comments and trailing commas, as VS Code's own editor writes it: the
// result keeps every comment outside the replaced entry (and those inside
// its env), the trailing commas and the layout; the diff touches only the
// servers' entries.
func TestMergeJSONC(t *testing.T) {
	current, err := os.ReadFile("testdata/clientconfig/vscode_mcp.jsonc")
	if err != nil {
		t.Fatal(err)
	}
	got, err := Merge(VSCode, current, testLaunches)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "testdata/clientconfig/vscode_mcp.merged.jsonc", got)

	for _, c := range []string{
		"// Team MCP servers",
		"// The token VS Code prompts for.",
		"/* Reached over HTTP: not mcpform's. */",
		`"${input:github-token}", // prompted`,
		"}, // github's own line",
		`// "old": { "command": "retired" },`,
		`"password": true,` + "\n    },\n  ],",
	} {
		if !strings.Contains(string(got), c) {
			t.Errorf("lost %q:\n%s", c, got)
		}
	}
	// Only the servers' entries changed: with github's entry and the
	// entries added after it cut out, both files are the same bytes.
	cut := func(b []byte) string {
		s := string(b)
		i := strings.Index(s, `"github": {`)
		j := strings.Index(s, "}, // github's own line\n")
		k := strings.Index(s, `    // "old"`)
		if i < 0 || j < i || k < j {
			t.Fatalf("github's entry or the comment after it is gone:\n%s", s)
		}
		return s[:i] + s[j:j+len("}, // github's own line\n")] + s[k:]
	}
	if diff := cmp.Diff(cut(current), cut(got)); diff != "" {
		t.Errorf("more than the servers' entries changed (-before +after):\n%s", diff)
	}
	plain, err := standardJSON(got)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Inputs  []map[string]any
		Servers map[string]struct {
			Type, Command, URL string
			Args               []string
			Env                map[string]string
		}
	}
	if err := json.Unmarshal(plain, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Inputs) != 1 || v.Servers["remote"].URL != "https://mcp.example.com/mcp" {
		t.Errorf("other keys or servers changed: %+v", v)
	}
	if gh := v.Servers["github"]; gh.Command != "/usr/local/bin/mcpform" || gh.Env["GITHUB_PERSONAL_ACCESS_TOKEN"] != "${input:github-token}" {
		t.Errorf("github: %+v", gh)
	}
	again, err := Merge(VSCode, got, testLaunches)
	if err != nil {
		t.Fatal(err)
	}
	if d := Diff("a", "b", got, again); d != "" {
		t.Errorf("a second merge changed the file:\n%s", d)
	}
}

// TestMergeWindowsFile merges into files as Windows editors save them: a
// UTF-8 BOM and CRLF line endings are read and written back as found, and
// the added lines end in CRLF too, so no line ends otherwise.
func TestMergeWindowsFile(t *testing.T) {
	lf := "{\n  // mine\n  \"mcpServers\": {\n    \"github\": {\"command\": \"npx\", \"args\": [\"-y\", \"pkg\"]}\n  }\n}\n"
	crlf := strings.ReplaceAll(lf, "\n", "\r\n")
	for _, tc := range []struct {
		name, in string
		bom      bool
		eol      string
	}{
		{"bom", "\xef\xbb\xbf" + lf, true, "\n"},
		{"crlf", crlf, false, "\r\n"},
		{"bom+crlf", "\xef\xbb\xbf" + crlf, true, "\r\n"},
		{"empty bom+crlf", "\xef\xbb\xbf\r\n", true, "\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Merge(ClaudeDesktop, []byte(tc.in), testLaunches)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.HasPrefix(got, utf8BOM) != tc.bom || bytes.Count(got, utf8BOM) > 1 {
				t.Errorf("BOM: want %v, got %q", tc.bom, got)
			}
			body := string(bytes.TrimPrefix(got, utf8BOM))
			if tc.eol == "\r\n" {
				if n := strings.Count(body, "\n") - strings.Count(body, "\r\n"); n != 0 {
					t.Errorf("%d lines end in LF alone in a CRLF file:\n%q", n, got)
				}
			} else if strings.Contains(body, "\r") {
				t.Errorf("a CR in an LF file:\n%q", got)
			}
			lines := strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n")
			if tc.name != "empty bom+crlf" && (lines[1] != "  // mine" || lines[3] != `    "github": {`) {
				t.Errorf("the file's own lines changed:\n%s", body)
			}
			if !strings.Contains(body, `"args": ["run", "-lock", "/home/alice/team/mcp.lock", "everything"]`+tc.eol) {
				t.Errorf("everything not added:\n%q", got)
			}
			if d := Diff("a", "b", []byte(tc.in), got); strings.Contains(d, "\r") || strings.Contains(d, "\ufeff") {
				t.Errorf("the diff shows a CR or the BOM:\n%q", d)
			}
			again, err := Merge(ClaudeDesktop, got, testLaunches)
			if err != nil || !bytes.Equal(again, got) {
				t.Errorf("a second merge changed the file (%v):\n%q", err, again)
			}
		})
	}
	// The reader import shares takes them too.
	res, err := Import([]byte("\xef\xbb\xbf"+crlf), Options{})
	if err != nil || !cmp.Equal(res.Names, []string{"github"}) {
		t.Errorf("Import of a BOM and CRLF file: %v, %v", res, err)
	}
}

// TestMergeLayouts adds entries to files laid out in other ways: each new
// entry sits as its neighbours do, a comment on the last entry's line
// stays on it, a trailing comma stays trailing.
func TestMergeLayouts(t *testing.T) {
	ls := Launches("/m", "/l", []string{"a"})
	for _, tc := range []struct{ name, in, want string }{
		{"tabs",
			"{\n\t\"mcpServers\": {\n\t\t\"x\": {\"command\": \"y\"}\n\t}\n}\n",
			"{\n\t\"mcpServers\": {\n\t\t\"x\": {\"command\": \"y\"},\n\t\t\"a\": {\n\t\t\t\"command\": \"/m\",\n\t\t\t\"args\": [\"run\", \"-lock\", \"/l\", \"a\"]\n\t\t}\n\t}\n}\n"},
		{"one line",
			`{"mcpServers": {"x": {"command": "y"}}}`,
			`{"mcpServers": {"x": {"command": "y"}, "a": {"command": "/m", "args": ["run", "-lock", "/l", "a"]}}}`},
		{"comment on the last line, trailing comma",
			"{\n  \"mcpServers\": {\n    \"x\": {}, // keep me here\n    // and me below\n  },\n}",
			"{\n  \"mcpServers\": {\n    \"x\": {}, // keep me here\n    \"a\": {\n      \"command\": \"/m\",\n      \"args\": [\"run\", \"-lock\", \"/l\", \"a\"]\n    },\n    // and me below\n  },\n}"},
		{"no servers key",
			"{\n  \"globalShortcut\": \"x\" // mine\n}\n",
			"{\n  \"globalShortcut\": \"x\", // mine\n  \"mcpServers\": {\n    \"a\": {\n      \"command\": \"/m\",\n      \"args\": [\"run\", \"-lock\", \"/l\", \"a\"]\n    }\n  }\n}\n"},
		{"null servers",
			"{\n  \"mcpServers\": null\n}",
			"{\n  \"mcpServers\": {\n    \"a\": {\n      \"command\": \"/m\",\n      \"args\": [\"run\", \"-lock\", \"/l\", \"a\"]\n    }\n  }\n}"},
		{"empty servers with a comment",
			"{\n  \"mcpServers\": { // none yet\n  }\n}",
			"{\n  \"mcpServers\": { // none yet\n    \"a\": {\n      \"command\": \"/m\",\n      \"args\": [\"run\", \"-lock\", \"/l\", \"a\"]\n    }\n  }\n}"},
		{"an entry already right, in its own layout, stays",
			"{\"mcpServers\": {\"a\": {\"args\": [\"run\",\"-lock\",\"/l\",\"a\"], /* mine */ \"command\": \"/m\"}}}",
			"{\"mcpServers\": {\"a\": {\"args\": [\"run\",\"-lock\",\"/l\",\"a\"], /* mine */ \"command\": \"/m\"}}}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Merge(Cursor, []byte(tc.in), ls)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestWorkspace: VS Code's and Cursor's project files have a workspace
// folder; user-level files (Claude Desktop's, ~/.cursor/mcp.json) and
// Claude Code's .mcp.json have none.
func TestWorkspace(t *testing.T) {
	e := Env{Home: "/home/alice", Dir: "/home/alice/proj", GOOS: "linux"}
	for _, tc := range []struct {
		c          Client
		file, want string
	}{
		{VSCode, "/home/alice/proj/.vscode/mcp.json", "/home/alice/proj"},
		{Cursor, "/home/alice/proj/.cursor/mcp.json", "/home/alice/proj"},
		{Cursor, "/home/alice/.cursor/mcp.json", ""},
		{VSCode, "/home/alice/.config/Code/User/mcp.json", ""},
		{VSCode, "/home/alice/proj/mcp.json", ""},
		{ClaudeCode, "/home/alice/proj/.mcp.json", ""},
		{ClaudeDesktop, "/home/alice/.config/Claude/claude_desktop_config.json", ""},
		{VSCode, "/home/alice/proj/.cursor/mcp.json", ""},
	} {
		if got := Workspace(tc.c, tc.file, e); got != tc.want {
			t.Errorf("Workspace(%s, %s) = %q, want %q", tc.c, tc.file, got, tc.want)
		}
	}
}

func TestInWorkspace(t *testing.T) {
	ls := Launches("/home/alice/go/bin/mcpform", "/home/alice/proj/infra/mcp.lock", []string{"github"})
	got := InWorkspace(ls, "/home/alice/proj", "/home/alice")
	want := []Launch{{Name: "github", Command: "${userHome}/go/bin/mcpform", Args: []string{"run", "-lock", "${workspaceFolder}/infra/mcp.lock", "github"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	ls = Launches("/opt/mcpform", "/home/alice/proj/mcp.lock", []string{"github"})
	if got := InWorkspace(ls, "/home/alice/proj", "/home/alice"); got[0].Command != "/opt/mcpform" || got[0].Args[2] != "${workspaceFolder}/mcp.lock" {
		t.Errorf("got %+v", got)
	}
	// /home/alice/project2 is not under /home/alice/proj.
	ls = Launches("/home/alice/proj/bin/mcpform", "/home/alice/project2/mcp.lock", []string{"github"})
	if got := InWorkspace(ls, "/home/alice/proj", ""); got[0].Command != "${workspaceFolder}/bin/mcpform" || got[0].Args[2] != "/home/alice/project2/mcp.lock" {
		t.Errorf("got %+v", got)
	}
	if got := InWorkspace(ls, "", "/home/alice"); !cmp.Equal(got, ls) {
		t.Errorf("no workspace: got %+v", got)
	}
}
