package onboard

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpform/mcpform/lang"
)

// loadImported loads what Import wrote with package lang, as validate
// does: it must have no error.
func loadImported(t *testing.T, hcl []byte) *lang.Config {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, lang.ConfigFile), hcl, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := lang.Load(dir, lang.Options{})
	if diags.HasErrors() {
		t.Fatalf("lang.Load of the imported mcp.hcl: %s\n%s", diags.Error(), hcl)
	}
	return cfg
}

func serverNamed(cfg *lang.Config, name string) *lang.Server {
	for _, s := range cfg.Servers {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// importEntry imports one server entry, named name, from a Claude Code file.
func importEntry(t *testing.T, name, entry string) *Result {
	t.Helper()
	data, err := json.Marshal(map[string]json.RawMessage{"mcpServers": json.RawMessage(`{` + quoteJSON(name) + `: ` + entry + `}`)})
	if err != nil {
		t.Fatalf("bad entry %s: %v", entry, err)
	}
	res, err := Import(data, Options{Client: ClaudeCode, LookPath: func(string) string { return "" }})
	if err != nil {
		t.Fatalf("Import(%s): %v", entry, err)
	}
	return res
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func noteTexts(res *Result) []string {
	var out []string
	for _, n := range res.Notes {
		out = append(out, n.String())
	}
	return out
}

// TestImportRemote imports remote entries as url servers: the url without
// any credential, the fixed headers lang takes, an Authorization Bearer
// header as auth { bearer_env }; each result loads with package lang as
// written, and no credential's value reaches mcp.hcl or the notes (every
// credential below holds "hunter2").
func TestImportRemote(t *testing.T) {
	for _, tc := range []struct {
		name, entry string
		client      string            // the entry's name, if not name
		url         string            // the url lang loads
		headers     map[string]string // the headers lang loads
		bearerEnv   string
		notes       []string // each a substring of one note
	}{
		{
			name:  "plain http",
			entry: `{"type": "http", "url": "https://mcp.example.com/mcp"}`,
			url:   "https://mcp.example.com/mcp",
		},
		{
			name:  "streamable-http type",
			entry: `{"type": "streamable-http", "url": "https://mcp.example.com/mcp"}`,
			url:   "https://mcp.example.com/mcp",
		},
		{
			name:  "a bare url (Cursor)",
			entry: `{"url": "https://mcp.example.com/mcp", "headers": {"X-Org": "acme", "X-Region": "eu"}}`,
			url:   "https://mcp.example.com/mcp", headers: map[string]string{"X-Org": "acme", "X-Region": "eu"},
		},
		{
			name:  "serverUrl",
			entry: `{"serverUrl": "https://mcp.example.com/mcp"}`,
			url:   "https://mcp.example.com/mcp",
		},
		{
			name:      "a literal bearer token",
			client:    "github",
			entry:     `{"type": "http", "url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer ghp_hunter2hunter2hunter2hunter2", "X-Org": "acme"}}`,
			url:       "https://api.githubcopilot.com/mcp/",
			headers:   map[string]string{"X-Org": "acme"},
			bearerEnv: "GITHUB_TOKEN",
			notes:     []string{`server "github": the client config sent a token in the Authorization header; mcp.hcl keeps no credentials: export it as GITHUB_TOKEN and keep auth { bearer_env = "GITHUB_TOKEN" }`},
		},
		{
			name:      "bearer ${env:NAME} (VS Code)",
			entry:     `{"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${env:GH_PAT}"}}`,
			url:       "https://mcp.example.com/mcp",
			bearerEnv: "GH_PAT",
			notes:     []string{`took the Authorization header's token from GH_PAT; mcp.hcl keeps no credentials: auth { bearer_env = "GH_PAT" } reads it from there`},
		},
		{
			name:      "${NAME} alone (Claude Code)",
			entry:     `{"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "${GH_PAT}"}}`,
			url:       "https://mcp.example.com/mcp",
			bearerEnv: "GH_PAT",
		},
		{
			name:      "$NAME and ${NAME:-default}",
			entry:     `{"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"authorization": "bearer ${GH_PAT:-none}"}}`,
			url:       "https://mcp.example.com/mcp",
			bearerEnv: "GH_PAT",
		},
		{
			name:      "$NAME",
			entry:     `{"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer $TRACKER_KEY"}}`,
			url:       "https://mcp.example.com/mcp",
			bearerEnv: "TRACKER_KEY",
		},
		{
			name:      "a VS Code input",
			entry:     `{"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${input:tracker}"}}`,
			url:       "https://mcp.example.com/mcp",
			bearerEnv: "A_VS_CODE_INPUT_TOKEN",
			notes:     []string{`the VS Code input "tracker", which only VS Code can prompt for; mcp.hcl keeps no credentials: export it as A_VS_CODE_INPUT_TOKEN`},
		},
		{
			name:  "basic authorization",
			entry: `{"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Basic aHVudGVyMjpodW50ZXIy"}}`,
			url:   "https://mcp.example.com/mcp",
			notes: []string{`Warning: server "basic authorization": the client config sent a credential in the Authorization header that is not a Bearer token; mcp.hcl keeps no credentials: it was left out. mcpform sends a token as Authorization: Bearer: if the server takes one, export it as BASIC_AUTHORIZATION_TOKEN and add auth { bearer_env = "BASIC_AUTHORIZATION_TOKEN" }`},
		},
		{
			name:    "credential headers",
			entry:   `{"url": "https://mcp.example.com/mcp", "headers": {"Cookie": "s=hunter2", "X-API-Key": "hunter2", "X-Auth-Token": "hunter2", "X-Session-Secret": "hunter2", "X-Password": "hunter2", "X-Plain": "Basic hunter2", "X-Opaque": "hunter2hunter2hunter2hunter2", "X-Org": "acme"}}`,
			url:     "https://mcp.example.com/mcp",
			headers: map[string]string{"X-Org": "acme"},
			notes:   []string{`Warning: server "credential headers": the client config sent a credential in the headers "Cookie", "X-API-Key", "X-Auth-Token", "X-Session-Secret", "X-Password", "X-Plain" and "X-Opaque"; mcp.hcl keeps no credentials: they were left out. mcpform sends a token as Authorization: Bearer: if the server takes one, export it as CREDENTIAL_HEADERS_TOKEN and add auth { bearer_env = "CREDENTIAL_HEADERS_TOKEN" }`},
		},
		{
			name:      "user information and query credentials",
			entry:     `{"type": "http", "url": "https://alice:hunter2@mcp.example.com/mcp?org=acme&token=hunter2&access_token=hunter2&api_key=hunter2&apiKey=hunter2&key=hunter2&client_secret=hunter2&password=hunter2&auth=hunter2&t=ghp_hunter2hunter2hunter2hunter2&ghp_hunter2hunter2hunter2hunter2&region=eu#frag", "headers": {"Authorization": "Bearer hunter2"}}`,
			url:       "https://mcp.example.com/mcp?org=acme&region=eu",
			bearerEnv: "USER_INFORMATION_AND_QUERY_CREDENTIALS_TOKEN",
			notes: []string{
				`the client config sent a credential in the url's user name and password and the url's query parameters "token", "access_token", "api_key", "apiKey", "key", "client_secret", "password", "auth", "t" and one named like a token; mcp.hcl keeps no credentials: they were left out, and auth { bearer_env = "USER_INFORMATION_AND_QUERY_CREDENTIALS_TOKEN" } sends the Authorization token only`,
				`the url's fragment (#…) is never sent to the server and was left out`,
			},
		},
		{
			name:  "a user name alone",
			entry: `{"url": "https://hunter2@mcp.example.com/mcp"}`,
			url:   "https://mcp.example.com/mcp",
			notes: []string{`the client config sent a credential in the url's user name; mcp.hcl keeps no credentials: it was left out`},
		},
		{
			name:  "a key in the path",
			entry: `{"url": "https://mcp.example.com/s/hunter2hunter2hunter2hunter2hunter2aa11/mcp"}`,
			url:   "https://mcp.example.com/s/hunter2hunter2hunter2hunter2hunter2aa11/mcp",
			notes: []string{`Warning: server "a key in the path": segment 2 of the url's path looks like a credential and mcp.hcl is meant to be committed`},
		},
		{
			name:    "headers lang refuses",
			entry:   `{"url": "https://mcp.example.com/mcp", "headers": {"Accept": "application/json", "Content-Type": "application/json", "Mcp-Session-Id": "x", "Bad Name": "x", "X-Org": "acme", "x-org": "other", "X-Line": "a\nb", "X-Tab": "a\tb", "X-Number": 1, "X-Var": "${env:ORG}"}}`,
			url:     "https://mcp.example.com/mcp",
			headers: map[string]string{"X-Org": "acme", "X-Tab": "a\tb"},
			notes: []string{
				`header "Accept" was left out: mcpform sets it itself`,
				`header "Content-Type" was left out`,
				`header "Mcp-Session-Id" was left out`,
				`header "Bad Name" is not an HTTP header name`,
				`headers "X-Org" and "x-org" are the same header (names are case-insensitive): the second was left out`,
				`the value of header "X-Line" holds a control character`,
				`header "X-Number" is not a string and was left out`,
				`header "X-Var" takes its value from the client variable ${env:ORG}, which mcpform does not expand, and was left out`,
			},
		},
		{
			name:  "sse",
			entry: `{"type": "sse", "url": "https://mcp.linear.app/sse"}`,
			url:   "https://mcp.linear.app/sse",
			notes: []string{`server "sse": the client connects to it over SSE (HTTP+SSE, deprecated): mcpform reaches it so too (plan finds the transport by the spec's fallback, and the lock pins it); if the server also has a Streamable HTTP endpoint (often the same URL without /sse, "https://mcp.linear.app/"), prefer that one`},
		},
		{
			name:  "sse elsewhere",
			entry: `{"type": "sse", "url": "https://mcp.example.com/events"}`,
			url:   "https://mcp.example.com/events",
			notes: []string{`if the server also has a Streamable HTTP endpoint (often the same URL without /sse), prefer that one`},
		},
		{
			name:  "a url ending in /sse",
			entry: `{"url": "https://mcp.example.com/v1/sse/"}`,
			url:   "https://mcp.example.com/v1/sse/",
			notes: []string{`its url ends in /sse, an HTTP+SSE endpoint: mcpform reaches it so too`},
		},
		{
			name:  "http to localhost",
			entry: `{"type": "http", "url": "http://localhost:3000/mcp"}`,
			url:   "http://localhost:3000/mcp",
		},
		{
			name:  "http to 127.0.0.1",
			entry: `{"type": "http", "url": "http://127.0.0.1:3000/mcp"}`,
			url:   "http://127.0.0.1:3000/mcp",
		},
		{
			name:  "http to ::1",
			entry: `{"type": "http", "url": "http://[::1]:3000/mcp"}`,
			url:   "http://[::1]:3000/mcp",
		},
		{
			name:  "disabled, with stdio keys",
			entry: `{"type": "http", "url": "https://mcp.example.com/mcp", "disabled": true, "env": {"X": "hunter2"}, "cwd": "/tmp", "timeout": 5}`,
			url:   "https://mcp.example.com/mcp",
			notes: []string{
				`is disabled in the client; imported anyway`,
				`not carried over: env, cwd (a url server is no process mcpform starts)`,
				`not carried over: timeout`,
			},
		},
		{
			name:  "oauth settings",
			entry: `{"url": "https://mcp.example.com/mcp", "auth": {"CLIENT_ID": "x", "CLIENT_SECRET": "hunter2"}}`,
			url:   "https://mcp.example.com/mcp",
			notes: []string{`Warning: server "oauth settings": the client's OAuth settings (auth) are not carried over: mcpform cannot sign in with OAuth yet. If the server takes a static token, export it as OAUTH_SETTINGS_TOKEN and add auth { bearer_env = "OAUTH_SETTINGS_TOKEN" }`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := tc.name
			if tc.client != "" {
				name = tc.client
			}
			res := importEntry(t, name, tc.entry)
			notes := noteTexts(res)
			if strings.Contains(string(res.HCL), "hunter2") && tc.name != "a key in the path" {
				t.Errorf("a credential reached mcp.hcl:\n%s", res.HCL)
			}
			for _, n := range notes {
				if strings.Contains(n, "hunter2") {
					t.Errorf("a credential reached the notes: %s", n)
				}
			}
			if len(res.Names) != 1 {
				t.Fatalf("imported %v, want one server; notes:\n%s", res.Names, strings.Join(notes, "\n"))
			}
			srv := serverNamed(loadImported(t, res.HCL), res.Names[0])
			if srv == nil || srv.Command != nil {
				t.Fatalf("not a url server:\n%s", res.HCL)
			}
			if srv.URL != tc.url {
				t.Errorf("url %q, want %q", srv.URL, tc.url)
			}
			if diff := cmp.Diff(tc.headers, srv.Headers); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
			got := ""
			if srv.Auth != nil {
				got = srv.Auth.BearerEnv
			}
			if got != tc.bearerEnv {
				t.Errorf("bearer_env %q, want %q:\n%s", got, tc.bearerEnv, res.HCL)
			}
			for _, want := range tc.notes {
				if !slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, want) }) {
					t.Errorf("no note contains %q; notes:\n%s", want, strings.Join(notes, "\n"))
				}
			}
			if len(res.Skipped) != 0 {
				t.Errorf("skipped %v", res.Skipped)
			}
		})
	}
}

// TestImportRemoteRefused: a remote entry whose url mcp.hcl would refuse is
// not imported, and its warning says why and what to do; the rest of the
// file still is, and loads.
func TestImportRemoteRefused(t *testing.T) {
	for _, tc := range []struct {
		name, entry string
		warning     string // a substring of the warning
		comment     string // the line in mcp.hcl's "Not imported" list
	}{
		{
			"lan", `{"type": "http", "url": "http://192.168.1.20:8080/mcp?token=hunter2"}`,
			`Warning: server "lan": not imported: its url is http:// to "192.168.1.20:8080", which is not a loopback host: over http the requests, and any token, cross the network in the clear, so mcp.hcl takes http only for localhost, 127.0.0.0/8 and [::1]. If the server serves https, add it by hand as url = "https://192.168.1.20:8080/mcp"`,
			`#   "lan": http:// to "192.168.1.20:8080", which is not a loopback host`,
		},
		{
			"any", `{"url": "http://0.0.0.0:8931/mcp"}`,
			`not imported: its url is http:// to "0.0.0.0:8931", the address a server listens on, not one mcp.hcl connects to: mcp.hcl takes http only for localhost, 127.0.0.0/8 and [::1]. If the server runs on this machine, add it by hand as url = "http://127.0.0.1:8931/mcp"`,
			`#   "any": http:// to "0.0.0.0:8931", which is not a loopback host`,
		},
		{
			"ws", `{"type": "ws", "url": "wss://mcp.example.com/mcp"}`,
			`not imported: it is a remote WebSocket ("ws") server, and mcpform speaks Streamable HTTP and HTTP+SSE only`,
			`#   "ws": a WebSocket (ws) server: mcpform speaks Streamable HTTP and HTTP+SSE only`,
		},
		{
			"wss", `{"url": "wss://mcp.example.com/mcp"}`,
			`not imported: its url is a WebSocket (wss://) url`,
			`#   "wss": a WebSocket (wss://) url: mcpform speaks Streamable HTTP and HTTP+SSE only`,
		},
		{
			"ftp", `{"type": "http", "url": "ftp://mcp.example.com/mcp"}`,
			`not imported: its url's scheme is "ftp"`,
			`#   "ftp": a ftp:// url: mcpform connects over https`,
		},
		{
			"relative", `{"type": "http", "url": "/mcp"}`,
			`not imported: its url is not an absolute URL`,
			`#   "relative": a url that is not absolute`,
		},
		{
			"hostless", `{"type": "http", "url": "https:///mcp"}`,
			`not imported: its url has no host`,
			`#   "hostless": a url without a host`,
		},
		{
			"port", `{"type": "http", "url": "https://mcp.example.com:99999/mcp"}`,
			`not imported: its url's port 99999 is not from 1 to 65535`,
			`#   "port": a url whose port is out of range`,
		},
		{
			"unreadable", `{"type": "http", "url": "https://hunter2:x@[::1/mcp"}`,
			`not imported: its url is not a URL`,
			`#   "unreadable": a url that is not a URL`,
		},
		{
			"variable", `{"type": "http", "url": "https://${env:MCP_HOST}/mcp"}`,
			`not imported: its url uses the client variable ${env:MCP_HOST}, which mcpform does not expand: add it by hand with the value written out`,
			`#   "variable": a url that uses the client variable ${env:MCP_HOST}`,
		},
		{
			"variable in the path", `{"type": "http", "url": "https://mcp.example.com/${workspaceFolder}/mcp"}`,
			`its url uses the client variable ${workspaceFolder}`,
			`#   "variable in the path": a url that uses the client variable ${workspaceFolder}`,
		},
		{
			"no url", `{"type": "sse"}`,
			`not imported: it is a remote sse server without a url`,
			`#   "no url": a remote sse server without a url`,
		},
		{
			"unknown type", `{"type": "grpc", "url": "https://mcp.example.com"}`,
			`not imported: it has type "grpc", which mcpform does not know (stdio, http and sse are)`,
			`#   "unknown type": type "grpc", which mcpform does not know`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := `{"mcpServers": {` + quoteJSON(tc.name) + `: ` + tc.entry + `, "time": {"command": "/usr/bin/mcp-server-time"}}}`
			res, err := Import([]byte(data), Options{Client: ClaudeCode, LookPath: func(string) string { return "" }})
			if err != nil {
				t.Fatal(err)
			}
			notes := noteTexts(res)
			if !slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, tc.warning) && strings.HasPrefix(n, "Warning: ") }) {
				t.Errorf("no warning contains %q; notes:\n%s", tc.warning, strings.Join(notes, "\n"))
			}
			if !strings.Contains(string(res.HCL), "\n# Not imported (mcpform import's warnings say what to do):\n"+tc.comment+"\n") {
				t.Errorf("mcp.hcl does not list %q:\n%s", tc.comment, res.HCL)
			}
			if diff := cmp.Diff([]string{tc.name}, res.Skipped); diff != "" {
				t.Errorf("skipped (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"time"}, res.Names); diff != "" {
				t.Errorf("imported (-want +got):\n%s", diff)
			}
			if strings.Contains(string(res.HCL)+strings.Join(notes, "\n"), "hunter2") {
				t.Errorf("a credential was printed:\n%s\n%s", res.HCL, strings.Join(notes, "\n"))
			}
			loadImported(t, res.HCL)
		})
	}
}

// TestImportRemoteNames: the suggested bearer_env comes from the server's
// name in mcp.hcl, which a clash or a rename changes; a clash with a
// remote server that is not imported leaves the name free.
func TestImportRemoteNames(t *testing.T) {
	data := []byte(`{"mcpServers": {
		"my.server": {"url": "https://a.example.com/mcp", "headers": {"Authorization": "Bearer hunter2"}},
		"my_server": {"url": "https://b.example.com/mcp", "headers": {"Authorization": "Bearer hunter2"}},
		"2fa": {"url": "https://c.example.com/mcp", "headers": {"Authorization": "Bearer hunter2"}},
		"lan.1": {"url": "http://10.0.0.1/mcp"},
		"lan_1": {"url": "https://lan.example.com/mcp"}
	}}`)
	res, err := Import(data, Options{Client: Cursor})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"my_server", "my_server_2", "_2fa", "lan_1"}, res.Names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	cfg := loadImported(t, res.HCL)
	for name, want := range map[string]string{"my_server": "MY_SERVER_TOKEN", "my_server_2": "MY_SERVER_2_TOKEN", "_2fa": "_2FA_TOKEN"} {
		if s := serverNamed(cfg, name); s == nil || s.Auth == nil || s.Auth.BearerEnv != want {
			t.Errorf("server %s: auth %+v, want bearer_env %s", name, s.Auth, want)
		}
	}
}

func TestEnvToken(t *testing.T) {
	for in, want := range map[string]string{
		"github":      "GITHUB_TOKEN",
		"my-server_2": "MY_SERVER_2_TOKEN",
		"_2fa_tool":   "_2FA_TOOL_TOKEN",
		"caf_":        "CAF__TOKEN",
	} {
		if got := envToken(in); got != want {
			t.Errorf("envToken(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzImportRemote imports a remote entry with any url and one header:
// whatever Import writes, package lang loads without an error (validate
// accepts it), and a header value lang would call a credential is never
// written.
func FuzzImportRemote(f *testing.F) {
	f.Add("sse", "https://mcp.example.com/sse", "X-Org", "acme")
	f.Add("http", "https://alice:pw@mcp.example.com/mcp?token=x&org=a#f", "Authorization", "Bearer ${env:GH}")
	f.Add("", "http://[::1]:3000/mcp", "x-api-key", "k")
	f.Add("http", "http://0.0.0.0:80/", "Accept", "*/*")
	f.Add("", "https://h/%7B$%7D/${x}", "X-A", "${input:x}")
	f.Add("http", "HTTPS://MCP.Example.COM:443/a b?q=%zz", "X\u200bY", "v\x00")
	f.Fuzz(func(t *testing.T, typ, rawURL, name, value string) {
		entry := map[string]any{"url": rawURL, "headers": map[string]string{name: value}}
		if typ != "" {
			entry["type"] = typ
		}
		data, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"s": entry}})
		if err != nil {
			return
		}
		res, err := Import(data, Options{Client: Cursor, LookPath: func(string) string { return "" }})
		if err != nil {
			return
		}
		if len(res.Names) == 0 {
			return
		}
		cfg := loadImported(t, res.HCL)
		for _, s := range cfg.Servers {
			for _, v := range s.Headers {
				if lang.LooksLikeCredential(v) {
					t.Fatalf("a credential in headers:\n%s", res.HCL)
				}
			}
		}
	})
}
