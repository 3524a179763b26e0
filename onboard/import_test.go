package onboard

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpform/mcpform/internal/escape"
	"github.com/mcpform/mcpform/lang"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// clientFiles are the names a client file has inside a testdata case.
var clientFiles = []string{"claude_desktop_config.json", ".mcp.json", ".vscode/mcp.json", ".cursor/mcp.json"}

// secretRE matches every value in the testdata that must never reach the
// generated mcp.hcl: env values, header values, URL passwords and queries.
var secretRE = regexp.MustCompile(`(?i)secret`)

// TestImportGolden imports each realistic client file in
// testdata/import/<case>/ and compares the result with the case's mcp.hcl
// and notes.txt (go test ./onboard -run TestImportGolden -update rewrites
// them). Every result must load with package lang, keep each argv exactly
// and copy no secret.
func TestImportGolden(t *testing.T) {
	cases, err := filepath.Glob("testdata/import/*")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, dir := range cases {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			var src string
			for _, f := range clientFiles {
				if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
					src = f
				}
			}
			if src == "" {
				t.Fatalf("%s holds no client file", dir)
			}
			data, err := os.ReadFile(filepath.Join(dir, src))
			if err != nil {
				t.Fatal(err)
			}
			client, ok := DetectClient(src)
			if !ok {
				t.Fatalf("DetectClient(%q) found nothing", src)
			}
			// No bare name is looked up: the goldens must not depend on
			// what this machine has installed (TestImportLauncherScript
			// covers the lookup).
			res, err := Import(data, Options{Source: src, Client: client, RequiredVersion: ">= 0.1.0", LookPath: func(string) string { return "" }})
			if err != nil {
				t.Fatal(err)
			}
			var notes strings.Builder
			for _, n := range res.Notes {
				notes.WriteString(n.String() + "\n")
			}
			golden(t, filepath.Join(dir, "mcp.hcl"), res.HCL)
			golden(t, filepath.Join(dir, "notes.txt"), []byte(notes.String()))

			if m := secretRE.Find(res.HCL); m != nil {
				// The credential-looking arguments are kept verbatim (the
				// server needs them) and flagged; nothing else may leak.
				for _, line := range strings.Split(string(res.HCL), "\n") {
					if secretRE.MatchString(line) && strings.Contains(line, "command") {
						continue
					}
					if secretRE.MatchString(line) {
						t.Errorf("a secret reached mcp.hcl: %s", line)
					}
				}
			}
			if m := secretRE.FindString(notes.String()); m != "" {
				for _, line := range strings.Split(notes.String(), "\n") {
					if secretRE.MatchString(line) && !strings.Contains(line, "command = [") && !strings.Contains(line, "argument") {
						t.Errorf("a secret reached the notes: %s", line)
					}
				}
			}

			// The output is a configuration lang accepts, and each
			// server's argv is the client's, byte for byte.
			tmp := t.TempDir()
			if err := os.WriteFile(filepath.Join(tmp, lang.ConfigFile), res.HCL, 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, diags := lang.Load(tmp, lang.Options{})
			if diags.HasErrors() {
				t.Fatalf("lang.Load of the imported mcp.hcl: %s", diags.Error())
			}
			// What import wrote lets every launcher start: validate has
			// nothing to warn about it.
			for _, d := range diags {
				if strings.HasPrefix(d.Summary, "Launcher without") {
					t.Errorf("the imported mcp.hcl draws %q: %s", d.Summary, d.Detail)
				}
			}
			var names []string
			for _, s := range cfg.Servers {
				names = append(names, s.Name)
			}
			want := slices.Clone(res.Names)
			slices.Sort(want)
			if diff := cmp.Diff(want, names); diff != "" {
				t.Errorf("servers (-imported +loaded):\n%s", diff)
			}
			raw := clientArgv(t, data, client)
			for _, s := range cfg.Servers {
				if s.URL != "" {
					// A url server: lang took its url, headers and auth;
					// the client's entry was a remote one.
					if _, ok := raw[res.Imported[s.Name]]; ok {
						t.Errorf("server %s: a url server from a stdio entry", s.Name)
					}
					continue
				}
				if diff := cmp.Diff(raw[res.Imported[s.Name]], s.Command); diff != "" {
					t.Errorf("server %s: command (-client +mcp.hcl):\n%s", s.Name, diff)
				}
			}
		})
	}
}

// clientArgv reads each stdio server's argv straight from the client file,
// as an independent check of Import.
func clientArgv(t *testing.T, data []byte, c Client) map[string][]string {
	t.Helper()
	plain, err := standardJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	top, err := object(plain)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := lookup(top, c.serversKey())
	servers, err := object(raw)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, m := range servers {
		s, err := decodeServer(m)
		if err != nil {
			t.Fatal(err)
		}
		if kind, _ := remoteKind(s); kind != "" {
			continue
		}
		out[m.Key] = append([]string{s.command}, s.args...)
	}
	return out
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

func TestIdentifier(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		taken    []string
	}{
		{"github", "github", nil},
		{"my-server_2", "my-server_2", nil},
		{"weather.local", "weather_local", nil},
		{"2fa tool", "_2fa_tool", nil},
		{"-x", "_-x", nil},
		{"", "_", nil},
		{"Perplexity", "Perplexity", nil},
		{"a b", "a_b_2", []string{"a_b"}},
		{"a b", "a_b_3", []string{"a_b", "a_b_2"}},
		{"café", "caf_", nil},
	} {
		taken := map[string]bool{}
		for _, n := range tc.taken {
			taken[n] = true
		}
		if got := identifier(tc.in, taken); got != tc.want {
			t.Errorf("identifier(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestQuote(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`plain`, `"plain"`},
		{`C:\Users\a`, `"C:\\Users\\a"`},
		{`${input:key}`, `"$${input:key}"`},
		{`%{ if x }`, `"%%{ if x }"`},
		{`$HOME and 100%`, `"$HOME and 100%"`},
		{"a\"b\n", `"a\"b\n"`},
		{"zero\u200bwidth", `"zero\u200bwidth"`},
		{"tag\U000E0041", `"tag\U000e0041"`},
	} {
		if got := escape.HCLString(tc.in); got != tc.want {
			t.Errorf("HCLString(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestUnpinned(t *testing.T) {
	for _, tc := range []struct {
		argv    []string
		flagged bool
		pinned  string // expected in the suggestion
	}{
		{[]string{"npx", "-y", "@modelcontextprotocol/server-memory"}, true, `"@modelcontextprotocol/server-memory@VERSION"`},
		{[]string{"npx", "-y", "@modelcontextprotocol/server-memory@2026.8.31"}, false, ""},
		{[]string{"npx", "pkg@latest"}, true, `["npx", "-y", "pkg@VERSION"]`},
		{[]string{"npx", "pkg@^1.2.0"}, true, `"pkg@VERSION"`},
		{[]string{"npx", "-y", "pkg@1.2.3-beta.1"}, false, ""},
		{[]string{"npx", "--package", "pkg", "bin"}, true, `"--package", "pkg@VERSION", "bin"`},
		{[]string{"npx", "--package=pkg@2.0.0", "bin"}, false, ""},
		{[]string{"npx", "-y", "./local"}, false, ""},
		{[]string{"npx", "-y", "github:owner/repo"}, false, ""},
		{[]string{"cmd", "/c", "npx", "-y", "pkg"}, true, `["cmd", "/c", "npx", "-y", "pkg@VERSION"]`},
		{[]string{`C:\nodejs\npx.cmd`, "pkg"}, true, `"pkg@VERSION"`},
		{[]string{"uvx", "mcp-server-time"}, true, `"mcp-server-time==VERSION"`},
		{[]string{"uvx", "mcp-server-time==2026.8.18"}, false, ""},
		{[]string{"uvx", "mcp-server-time@2026.8.18"}, false, ""},
		{[]string{"uvx", "--python", "3.12", "mcp-server-time"}, true, `"--python", "3.12", "mcp-server-time==VERSION"`},
		{[]string{"uvx", "--from", "mcp-server-fetch>=2025.1", "mcp-server-fetch"}, true, `"--from", "mcp-server-fetch==VERSION", "mcp-server-fetch"`},
		{[]string{"uvx", "--from", "git+https://github.com/x/y", "y"}, false, ""},
		{[]string{"node", "index.js"}, false, ""},
	} {
		w, ok := unpinned(tc.argv)
		if ok != tc.flagged {
			t.Errorf("unpinned(%q) flagged = %v, want %v (%s)", tc.argv, ok, tc.flagged, w.text)
			continue
		}
		if ok && !strings.Contains(w.text, tc.pinned) {
			t.Errorf("unpinned(%q) = %s\nwant it to suggest %s", tc.argv, w.text, tc.pinned)
		}
	}
}

func TestPaths(t *testing.T) {
	for _, tc := range []struct {
		arg               string
		command           bool
		windows, relative bool
	}{
		{`C:\Users\alice\x.js`, false, true, false},
		{`c:/tools/x.exe`, true, true, false},
		{`\\server\share\x`, false, true, false},
		{`.\server.py`, false, true, false},
		{`./build/index.js`, false, false, true},
		{`../repo`, false, false, true},
		{`build/index.js`, false, false, true},
		{`scripts/run.sh`, true, false, true},
		{`--db=./data.db`, false, false, true},
		{`/usr/bin/node`, true, false, false},
		{`~/notes`, false, false, false},
		{`@scope/pkg`, false, false, false},
		{`https://example.com/a.js`, false, false, false},
		{`Europe/Berlin`, false, false, false},
		{`node`, true, false, false},
	} {
		if got := windowsPath(tc.arg); got != tc.windows {
			t.Errorf("windowsPath(%q) = %v", tc.arg, got)
		}
		if got := relativePath(tc.arg, tc.command); got != tc.relative {
			t.Errorf("relativePath(%q, %v) = %v", tc.arg, tc.command, got)
		}
	}
}

func TestImportErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`[]`, "not a JSON object"},
		{`{"mcpServers": {}}`, "lists no servers"},
		{`{"theme": "dark"}`, `no "mcpServers" or "servers" key`},
		{`{"mcpServers": {"a": {"command": 1}}}`, `server "a": command must be a string`},
		{`{"mcpServers": {"a": {"command": "x", "args": "y"}}}`, `args must be a list of strings`},
		{`{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}`, `"a" appears twice`},
		{`{"mcpServers": {"a": {"command": "x"}}} {}`, "after the JSON object"},
	} {
		_, err := Import([]byte(tc.in), Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Import(%s) = %v, want an error containing %q", tc.in, err, tc.want)
		}
	}
}

// TestStandardJSON reads JSON with comments and trailing commas, as VS Code
// and Cursor write mcp.json: comments go, strings that look like comments
// stay, and every byte keeps its offset (an error's line is the file's).
func TestStandardJSON(t *testing.T) {
	in := `{
  // a comment with "quotes" and a, trailing comma,
  "a": "http://x // not a comment", /* block */
  "b": [1, 2,],
  "c": {"d": "e",  // trailing
  },
}`
	out, err := standardJSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(in) || strings.Count(string(out), "\n") != strings.Count(in, "\n") {
		t.Fatalf("offsets moved: len %d want %d\n%s", len(out), len(in), out)
	}
	ms, err := object(out)
	if err != nil {
		t.Fatalf("%v in\n%s", err, out)
	}
	if v, _ := lookup(ms, "a"); string(v) != `"http://x // not a comment"` {
		t.Errorf("a = %s", v)
	}
	if out, err := standardJSON([]byte(`{"a": "/* x */"}`)); err != nil || string(out) != `{"a": "/* x */"}` {
		t.Errorf("a comment inside a string was stripped: %s, %v", out, err)
	}

	// A BOM and CRLF line endings, as Windows editors save: read as if
	// they were not there.
	out, err = standardJSON([]byte("\xef\xbb\xbf{\r\n  // c\r\n  \"a\": 1,\r\n}\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if ms, err := object(out); err != nil || len(ms) != 1 || string(ms[0].Value) != "1" {
		t.Errorf("BOM and CRLF: %v, %v", err, ms)
	}

	for _, tc := range []struct{ in, want string }{
		{"{\n  \"a\": 1 /* open", "line 2"},
		{"\xff\xfe{\x00}\x00", "UTF-16"},
		{"{\n\n  \"a\": x\n}", "line 3, column 8"},
	} {
		if _, err := standardJSON([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("standardJSON(%q) = %v, want an error containing %q", tc.in, err, tc.want)
		}
	}
}

func TestLocations(t *testing.T) {
	got := Locations(Env{Home: "/home/u", Dir: "/p", GOOS: "linux"})
	want := []Location{
		{ClaudeCode, "/p/.mcp.json"},
		{VSCode, "/p/.vscode/mcp.json"},
		{Cursor, "/p/.cursor/mcp.json"},
		{ClaudeDesktop, "/home/u/.config/Claude/claude_desktop_config.json"},
		{Cursor, "/home/u/.cursor/mcp.json"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("linux (-want +got):\n%s", diff)
	}
	if got := claudeDesktopPath(Env{Home: "/Users/u", GOOS: "darwin"}); got != "/Users/u/Library/Application Support/Claude/claude_desktop_config.json" {
		t.Errorf("darwin: %s", got)
	}
}

// TestImportLauncherEnv imports a Claude Desktop configuration whose
// servers start through npx and uvx: their env passes PATH and HOME, with
// a comment that says why, after the names the client file set; a name the
// file already passes is not repeated, and a plain program gets nothing.
func TestImportLauncherEnv(t *testing.T) {
	data := []byte(`{"mcpServers": {
  "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory@2026.8.4"], "env": {"MEMORY_FILE_PATH": "/tmp/m.json"}},
  "time": {"command": "uvx", "args": ["mcp-server-time==2026.8.18"], "env": {"PATH": "/usr/local/bin:/usr/bin"}},
  "github": {"command": "/usr/local/bin/github-mcp-server", "args": ["stdio"]}
}}`)
	res, err := Import(data, Options{Client: ClaudeDesktop, LookPath: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	want := `# Imported by ` + "`mcpform import`" + ` from Claude Desktop's configuration.
# Review every command before ` + "`mcpform plan`" + `: each runs as written, without a shell.

server "memory" {
  # Set in the environment (the client file's values were not copied): MEMORY_FILE_PATH.
  # env passes PATH and HOME: npx needs PATH to find node (and the package's own commands) and HOME for npm's package cache; a server gets only the variables env lists.
  command = ["npx", "-y", "@modelcontextprotocol/server-memory@2026.8.4"]
  env     = ["MEMORY_FILE_PATH", "PATH", "HOME"]
}

server "time" {
  # Set in the environment (the client file's values were not copied): PATH.
  # env passes PATH and HOME: uvx needs PATH to find python and HOME for uv's cache; a server gets only the variables env lists.
  command = ["uvx", "mcp-server-time==2026.8.18"]
  env     = ["PATH", "HOME"]
}

server "github" {
  command = ["/usr/local/bin/github-mcp-server", "stdio"]
}
`
	if diff := cmp.Diff(want, string(res.HCL)); diff != "" {
		t.Errorf("mcp.hcl (-want +got):\n%s", diff)
	}
	var notes []string
	for _, n := range res.Notes {
		if strings.Contains(n.Text, "env passes") {
			notes = append(notes, n.String())
		}
	}
	wantNotes := []string{
		`server "memory": env passes PATH and HOME: npx needs PATH to find node (and the package's own commands) and HOME for npm's package cache, and mcpform gives a server only the variables its env lists`,
		`server "time": env passes PATH and HOME: uvx needs PATH to find python and HOME for uv's cache, and mcpform gives a server only the variables its env lists`,
	}
	if diff := cmp.Diff(wantNotes, notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
}

// TestImportLauncherScript imports a server whose command is a
// #!/usr/bin/env node script, by absolute path and by a bare name found
// through LookPath: env passes PATH (no HOME: a script has no cache).
func TestImportLauncherScript(t *testing.T) {
	bin := t.TempDir()
	script := filepath.Join(bin, "mcp-server-everything")
	if err := os.WriteFile(script, []byte("#!/usr/bin/env node\nrequire('./index.js')\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	binary := filepath.Join(bin, "server")
	if err := os.WriteFile(binary, []byte("\x7fELF\x02\x01\x01\x00"), 0o755); err != nil {
		t.Fatal(err)
	}
	data := []byte(`{"mcpServers": {
  "bare": {"command": "mcp-server-everything", "args": ["stdio"]},
  "abs": {"command": ` + strconv.Quote(script) + `},
  "binary": {"command": "server"}
}}`)
	res, err := Import(data, Options{Client: ClaudeDesktop, LookPath: func(p string) string { return lang.LookPath(p, bin) }})
	if err != nil {
		t.Fatal(err)
	}
	comment := "  # env passes PATH: a #!/usr/bin/env node script needs PATH to find node; a server gets only the variables env lists.\n"
	if got := strings.Count(string(res.HCL), comment); got != 2 {
		t.Errorf("the PATH comment is written %d times, want 2 (bare and abs):\n%s", got, res.HCL)
	}
	if got := strings.Count(string(res.HCL), "  env     = [\"PATH\"]\n"); got != 2 {
		t.Errorf("env = [\"PATH\"] written %d times, want 2 (bare and abs):\n%s", got, res.HCL)
	}
	if strings.Contains(string(res.HCL), "HOME") {
		t.Errorf("a script got HOME:\n%s", res.HCL)
	}
	if !strings.Contains(string(res.HCL), "server \"binary\" {\n  command = [\"server\"]\n}\n") {
		t.Errorf("a binary got an env:\n%s", res.HCL)
	}
}

// TestImportBOMAndCRLF imports a Windows editor's save of a Claude Desktop
// file (UTF-8 BOM, CRLF line endings) exactly as the plain file: the
// shared reader (standardJSON) drops both, and no CR reaches a string or
// the generated mcp.hcl, which is LF, as import writes every file.
func TestImportBOMAndCRLF(t *testing.T) {
	plain, err := os.ReadFile("testdata/import/claude-desktop-windows/claude_desktop_config.json")
	if err != nil {
		t.Fatal(err)
	}
	windows := append([]byte("\xef\xbb\xbf"), []byte(strings.ReplaceAll(string(plain), "\n", "\r\n"))...)
	opts := Options{Client: ClaudeDesktop, LookPath: func(string) string { return "" }}
	want, err := Import(plain, opts)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Import(windows, opts)
	if err != nil {
		t.Fatalf("BOM and CRLF: %v", err)
	}
	if diff := cmp.Diff(string(want.HCL), string(got.HCL)); diff != "" {
		t.Errorf("mcp.hcl (-plain +windows):\n%s", diff)
	}
	if diff := cmp.Diff(want.Notes, got.Notes); diff != "" {
		t.Errorf("notes (-plain +windows):\n%s", diff)
	}
	if strings.ContainsAny(string(got.HCL), "\r\ufeff") {
		t.Errorf("a CR or the BOM reached mcp.hcl")
	}
}

// TestLaunchOf specifies which client entries run mcpform's proxy: those
// import leaves out and client-config does not count as bypassing it.
func TestLaunchOf(t *testing.T) {
	for _, tt := range []struct {
		command string
		args    []string
		want    mcpformLaunch
		ok      bool
	}{
		// What client-config writes, and its ${userHome} form.
		{"/home/a/go/bin/mcpform", []string{"run", "-lock", "/p/mcp.lock", "github"}, mcpformLaunch{"/p/mcp.lock", "github"}, true},
		{"${userHome}/go/bin/mcpform", []string{"run", "-lock", "${workspaceFolder}/mcp.lock", "time"}, mcpformLaunch{"${workspaceFolder}/mcp.lock", "time"}, true},
		{"mcpform", []string{"run", "notes"}, mcpformLaunch{"mcp.lock", "notes"}, true},
		{`C:\bin\McpForm.exe`, []string{"run", "--lock=C:\\p\\mcp.lock", "a"}, mcpformLaunch{`C:\p\mcp.lock`, "a"}, true},
		// -chdir first; run's valued flags before and after the name.
		{"mcpform", []string{"-chdir=/srv", "run", "-spin", "0", "x", "-audit", "/a.jsonl"}, mcpformLaunch{"mcp.lock", "x"}, true},
		{"mcpform", []string{"-chdir", "/srv", "run", "-explain-sandbox", "-lock", "l.lock", "y"}, mcpformLaunch{"l.lock", "y"}, true},
		{"mcpform", []string{"run", "--", "-odd"}, mcpformLaunch{"mcp.lock", "-odd"}, true},
		// Not the proxy: another command of mcpform, no server, another
		// program, a program whose name only starts with mcpform.
		{"mcpform", []string{"plan"}, mcpformLaunch{}, false},
		{"mcpform", []string{"run"}, mcpformLaunch{}, false},
		{"mcpform", []string{"run", "-lock", "/p/mcp.lock"}, mcpformLaunch{}, false},
		{"mcpform", nil, mcpformLaunch{}, false},
		{"npx", []string{"-y", "mcpform", "run", "x"}, mcpformLaunch{}, false},
		{"/usr/bin/mcpform-tool", []string{"run", "x"}, mcpformLaunch{}, false},
	} {
		got, ok := launchOf(tt.command, tt.args)
		if ok != tt.ok || got != tt.want {
			t.Errorf("launchOf(%q, %q) = %+v, %v; want %+v, %v", tt.command, tt.args, got, ok, tt.want, tt.ok)
		}
	}
}

// TestImportLeavesOutMcpformRun: importing a file client-config wrote must
// not wrap mcpform in mcpform; each such entry is left out with a note.
func TestImportLeavesOutMcpformRun(t *testing.T) {
	data := []byte(`{"mcpServers": {
		"github": {"command": "/opt/bin/mcpform", "args": ["run", "-lock", "/p/mcp.lock", "github"], "env": {"GITHUB_TOKEN": "x"}},
		"fetch": {"command": "uvx", "args": ["mcp-server-fetch==2025.4.7"]}
	}}`)
	res, err := Import(data, Options{Client: ClaudeDesktop, LookPath: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"fetch"}, res.Names); diff != "" {
		t.Errorf("imported (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"github"}, res.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if strings.Contains(string(res.HCL), "/opt/bin/mcpform") {
		t.Errorf("mcp.hcl runs mcpform:\n%s", res.HCL)
	}
	want := Note{Text: `server "github" is already managed by mcpform (lock "/p/mcp.lock"): left out`}
	if !slices.Contains(res.Notes, want) {
		t.Errorf("notes %v lack %v", res.Notes, want)
	}
	for _, n := range res.Notes {
		if n.Warning {
			t.Errorf("unexpected warning: %v", n)
		}
	}
}
