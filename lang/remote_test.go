package lang

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/mcpform/mcpform/policy"
)

// TestRemoteServer loads url servers: the url normalised, headers and
// auth as written, and the arguments both kinds of server share.
func TestRemoteServer(t *testing.T) {
	dir := writeTree(t, t.TempDir(), map[string]string{
		"mcp.hcl": `
variable "org" {
  type    = string
  default = "acme"
}

server "github" {
  url     = "https://api.githubcopilot.com/mcp/"
  headers = { "X-Org" = var.org, X-Trace = "on" }
  auth {
    oauth  = true
    scopes = ["repo:read", "read:org"]
  }
  timeout  = "1m"
  protocol = "2026-07-28"
  taint {
    sources = ["get_issue"]
    sinks   = []
  }
}

server "ci" {
  url = "https://mcp.example.com/v1/mcp?tenant=Acme&x"
  auth {
    bearer_env = "MCP_TOKEN"
  }
}

server "plain" {
  url = "https://mcp.example.com"
  auth {
    oauth  = true
    scopes = []
  }
}
`,
	})
	cfg := mustLoad(t, dir, Options{Version: "0.1.0"})
	want := []*Server{
		{
			Name: "ci", Addr: "server.ci",
			URL:      "https://mcp.example.com/v1/mcp?tenant=Acme&x",
			Auth:     &Auth{BearerEnv: "MCP_TOKEN"},
			Protocol: "auto", Timeout: 30 * time.Second,
		},
		{
			Name: "github", Addr: "server.github",
			URL:      "https://api.githubcopilot.com/mcp/",
			Headers:  map[string]string{"X-Org": "acme", "X-Trace": "on"},
			Auth:     &Auth{OAuth: true, Scopes: []string{"repo:read", "read:org"}},
			Protocol: "2026-07-28", Timeout: time.Minute,
			Policy: policy.Policy{Taint: &policy.Taint{Sources: []string{"get_issue"}, Sinks: []string{}}},
		},
		{
			Name: "plain", Addr: "server.plain",
			URL:      "https://mcp.example.com/",
			Auth:     &Auth{OAuth: true},
			Protocol: "auto", Timeout: 30 * time.Second,
		},
	}
	if diff := cmp.Diff(want, cfg.Servers, ignoreRanges); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	// The JSON plan.ConfigDigest hashes: a remote server's fields, none of
	// a command server's absent ones.
	got, err := json.Marshal(cfg.Servers[0])
	if err != nil {
		t.Fatal(err)
	}
	const wantJSON = `{"Name":"ci","Addr":"server.ci","Command":null,"URL":"https://mcp.example.com/v1/mcp?tenant=Acme\u0026x","Auth":{"BearerEnv":"MCP_TOKEN"},"Env":null,"Protocol":"auto","Timeout":30000000000,"Version":"","ToolVersions":null,"ClientCapabilities":null,"Policy":{}}`
	if string(got) != wantJSON {
		t.Errorf("JSON of a remote server:\n got %s\nwant %s", got, wantJSON)
	}
}

// TestURLNormalised: the url is stored with a lower-case scheme and host,
// without the scheme's default port, with "/" for an empty path, and the
// query (and the path's escaping) as written.
func TestURLNormalised(t *testing.T) {
	for in, want := range map[string]string{
		"https://api.githubcopilot.com/mcp/":         "https://api.githubcopilot.com/mcp/",
		"HTTPS://API.GitHubCopilot.COM/MCP":          "https://api.githubcopilot.com/MCP",
		"https://mcp.example.com:443":                "https://mcp.example.com/",
		"https://mcp.example.com:443/mcp":            "https://mcp.example.com/mcp",
		"https://mcp.example.com:8443/mcp":           "https://mcp.example.com:8443/mcp",
		"https://mcp.example.com:/mcp":               "https://mcp.example.com/mcp",
		"https://mcp.example.com/mcp?B=1&a=%2F":      "https://mcp.example.com/mcp?B=1&a=%2F",
		"https://mcp.example.com?x":                  "https://mcp.example.com/?x",
		"https://mcp.example.com/a%2Fb/c":            "https://mcp.example.com/a%2Fb/c",
		"http://localhost:8080/mcp":                  "http://localhost:8080/mcp",
		"http://LocalHost:80/mcp":                    "http://localhost/mcp",
		"http://127.0.0.1":                           "http://127.0.0.1/",
		"http://127.1.2.3:3000/mcp":                  "http://127.1.2.3:3000/mcp",
		"http://[::1]:80/mcp":                        "http://[::1]/mcp",
		"http://[::1]:8080":                          "http://[::1]:8080/",
		"https://[2001:DB8::1]:443/mcp":              "https://[2001:db8::1]/mcp",
		"https://mcp.example.com:80/mcp":             "https://mcp.example.com:80/mcp",
		"http://localhost:443/mcp":                   "http://localhost:443/mcp",
		"https://xn--bcher-kva.example/mcp?q=%C3%A9": "https://xn--bcher-kva.example/mcp?q=%C3%A9",
	} {
		var diags hcl.Diagnostics
		got := checkURL(&hcl.Attribute{Name: "url", Expr: hcl.StaticExpr(cty.StringVal(in), hcl.Range{})}, in, &diags)
		if diags.HasErrors() || got != want {
			t.Errorf("checkURL(%q) = %q, %v; want %q", in, got, errorsOf(diags), want)
		}
	}
}

// TestRemoteErrors checks what each diagnostic of a remote server says to
// do, and where it points; testdata/error-files/remote.hcl checks that
// exactly these are reported.
func TestRemoteErrors(t *testing.T) {
	const head = `server "s" {` + "\n"
	cases := map[string]struct {
		body    string // the server block's body; line 2 of the file is its first line
		summary string
		line    int      // the line the diagnostic starts on
		detail  []string // what its detail says
	}{
		"neither": {
			body:    `  timeout = "30s"`,
			summary: "Missing required argument", line: 1,
			detail: []string{"needs command or url", `command = ["program"`, `url = "https://`},
		},
		"both": {
			body:    "  command = [\"x\"]\n  url = \"https://mcp.example.com/\"",
			summary: "Conflicting arguments command and url", line: 3,
			detail: []string{"Pick one", "remove url", "remove command"},
		},
		"env on url": {
			body:    "  url = \"https://mcp.example.com/\"\n  env = [\"TOKEN\"]",
			summary: "Unsupported argument for a remote server", line: 3,
			detail: []string{"process mcpform starts", `auth { bearer_env = "NAME" }`},
		},
		"sandbox on url": {
			body:    "  url = \"https://mcp.example.com/\"\n  sandbox {}",
			summary: "Unsupported block for a remote server", line: 3,
			detail: []string{"confines a local process", "Remove the sandbox block"},
		},
		"allow_install_scripts on url": {
			body:    "  url = \"https://mcp.example.com/\"\n  allow_install_scripts = true",
			summary: "Unsupported argument for a remote server", line: 3,
			detail: []string{"install scripts of a pinned npm tree", "Remove allow_install_scripts"},
		},
		"allow_install_scripts not a bool": {
			body:    "  command = [\"x\"]\n  allow_install_scripts = \"yes\"",
			summary: "Incorrect attribute value type", line: 3,
			detail: []string{"true or false"},
		},
		"auth on command": {
			body:    "  command = [\"x\"]\n  auth {\n    oauth = true\n  }",
			summary: "Unsupported block for a local server", line: 3,
			detail: []string{"remote (url) server", "env"},
		},
		"headers on command": {
			body:    "  command = [\"x\"]\n  headers = { X-Org = \"acme\" }",
			summary: "Unsupported argument for a local server", line: 3,
			detail: []string{"Remove headers"},
		},
		"http": {
			body:    `  url = "http://mcp.example.com/"`,
			summary: "Invalid url", line: 2,
			detail: []string{"must use https", "loopback", "localhost, 127.0.0.0/8, [::1]"},
		},
		"http on a look-alike of localhost": {
			body:    `  url = "http://localhost.example.com/"`,
			summary: "Invalid url", line: 2,
			detail: []string{"must use https"},
		},
		"userinfo": {
			body:    `  url = "https://me:hunter2@mcp.example.com/"`,
			summary: "Invalid url", line: 2,
			detail: []string{"user name or password", "auth { bearer_env"},
		},
		"fragment": {
			body:    `  url = "https://mcp.example.com/#x"`,
			summary: "Invalid url", line: 2,
			detail: []string{"fragment"},
		},
		"empty fragment": {
			body:    `  url = "https://mcp.example.com/#"`,
			summary: "Invalid url", line: 2,
			detail: []string{"fragment"},
		},
		"scheme": {
			body:    `  url = "ws://localhost/"`,
			summary: "Invalid url", line: 2,
			detail: []string{`not "ws"`},
		},
		"not absolute": {
			body:    `  url = "mcp.example.com/mcp"`,
			summary: "Invalid url", line: 2,
			detail: []string{"absolute https:// URL"},
		},
		"no host": {
			body:    `  url = "https://:8443/mcp"`,
			summary: "Invalid url", line: 2,
			detail: []string{"needs a host"},
		},
		"opaque": {
			body:    `  url = "https:mcp.example.com"`,
			summary: "Invalid url", line: 2,
			detail: []string{"needs a host"},
		},
		"unparsable": {
			body:    `  url = "https://mcp.example.com/%zz"`,
			summary: "Invalid url", line: 2,
			detail: []string{"is not a URL", "invalid URL escape"},
		},
		"port": {
			body:    `  url = "https://mcp.example.com:65536/"`,
			summary: "Invalid url", line: 2,
			detail: []string{"from 1 to 65535"},
		},
		"url type": {
			body:    `  url = ["https://mcp.example.com/"]`,
			summary: "Incorrect attribute value type", line: 2,
			detail: []string{"url must be a string"},
		},
		"header name": {
			body:    "  url = \"https://mcp.example.com/\"\n  headers = {\n    \"X Org\" = \"acme\"\n  }",
			summary: "Invalid header name", line: 4,
			detail: []string{`"X Org" is not an HTTP header name`},
		},
		"reserved header": {
			body:    "  url = \"https://mcp.example.com/\"\n  headers = {\n    \"mcp-protocol-version\" = \"2025-06-18\"\n  }",
			summary: "Reserved header", line: 4,
			detail: []string{`mcpform sets "mcp-protocol-version" itself`, "remove it"},
		},
		"authorization header": {
			body:    "  url = \"https://mcp.example.com/\"\n  headers = {\n    authorization = \"x\"\n  }",
			summary: "Credential in headers", line: 4,
			detail: []string{"carries a credential", `auth { bearer_env = "NAME" }`},
		},
		"proxy-authorization header": {
			body:    "  url = \"https://mcp.example.com/\"\n  headers = {\n    Proxy-Authorization = \"x\"\n  }",
			summary: "Credential in headers", line: 4,
			detail: []string{`auth { bearer_env = "NAME" }`},
		},
		"secret in the name": {
			body:    "  url = \"https://mcp.example.com/\"\n  headers = {\n    X-Client-SECRET = \"x\"\n  }",
			summary: "Credential in headers", line: 4,
			detail: []string{`"X-Client-SECRET" carries a credential`},
		},
		"password in the name": {
			body:    "  url = \"https://mcp.example.com/\"\n  headers = {\n    X-Password = \"x\"\n  }",
			summary: "Credential in headers", line: 4,
			detail: []string{`auth { bearer_env = "NAME" }`},
		},
		"basic value": {
			body:    "  url = \"https://mcp.example.com/\"\n  headers = {\n    X-Forward = \"Basic dXNlcjpwYXNz\"\n  }",
			summary: "Credential in headers", line: 4,
			detail: []string{"looks like a credential", `auth { bearer_env = "NAME" }`},
		},
		"sk- value": {
			body:    "  url = \"https://mcp.example.com/\"\n  headers = {\n    X-Upstream = \"sk-proj-abcdefghijklmnopqrstuvwx\"\n  }",
			summary: "Credential in headers", line: 4,
			detail: []string{"looks like a credential"},
		},
		"hex value": {
			body:    "  url = \"https://mcp.example.com/\"\n  headers = {\n    X-Upstream = \"9f86d081884c7d659a2feaa0c55ad015\"\n  }",
			summary: "Credential in headers", line: 4,
			detail: []string{"looks like a credential"},
		},
		"NUL in a value": {
			body:    "  url = \"https://mcp.example.com/\"\n  headers = {\n    X-Org = \"ac\\u0000me\"\n  }",
			summary: "Invalid header value", line: 4,
			detail: []string{"control character"},
		},
		"header value type": {
			body:    "  url = \"https://mcp.example.com/\"\n  headers = {\n    X-Org = [\"acme\"]\n  }",
			summary: "Incorrect attribute value type", line: 4,
			detail: []string{`header "X-Org" must be a string`},
		},
		"oauth and bearer_env": {
			body:    "  url = \"https://mcp.example.com/\"\n  auth {\n    oauth      = true\n    bearer_env = \"TOKEN\"\n  }",
			summary: "Conflicting authentication methods", line: 5,
			detail: []string{"one method", "not both"},
		},
		"no method": {
			body:    "  url = \"https://mcp.example.com/\"\n  auth {\n    scopes = [\"repo\"]\n  }",
			summary: "Missing authentication method", line: 3,
			detail: []string{"oauth = true", `bearer_env = "NAME"`},
		},
		"scopes with bearer_env": {
			body:    "  url = \"https://mcp.example.com/\"\n  auth {\n    bearer_env = \"TOKEN\"\n    scopes     = [\"repo\"]\n  }",
			summary: "Scopes without OAuth", line: 5,
			detail: []string{"need oauth = true", "remove scopes"},
		},
		"scope": {
			body:    "  url = \"https://mcp.example.com/\"\n  auth {\n    oauth  = true\n    scopes = [\"repo\", \"a\\\\b\"]\n  }",
			summary: "Invalid OAuth scope", line: 5,
			detail: []string{`"a\\b" is not an OAuth scope`},
		},
		"empty scope": {
			body:    "  url = \"https://mcp.example.com/\"\n  auth {\n    oauth  = true\n    scopes = [\"\"]\n  }",
			summary: "Invalid OAuth scope", line: 5,
			detail: []string{"printable ASCII without spaces"},
		},
		"bearer_env name": {
			body:    "  url = \"https://mcp.example.com/\"\n  auth {\n    bearer_env = \"1TOKEN\"\n  }",
			summary: "Invalid environment variable name", line: 4,
			detail: []string{`"1TOKEN" is not a valid environment variable name`},
		},
		"bearer_env with a value": {
			body:    "  url = \"https://mcp.example.com/\"\n  auth {\n    bearer_env = \"TOKEN=abc\"\n  }",
			summary: "Invalid environment variable name", line: 4,
			detail: []string{`write "TOKEN"`},
		},
		"bearer_env is the token": {
			body:    "  url = \"https://mcp.example.com/\"\n  auth {\n    bearer_env = \"github_pat_11ABCDEFG0123456789_abcdefghijklmnop\"\n  }",
			summary: "Invalid environment variable name", line: 4,
			detail: []string{"not the token", `bearer_env = "GITHUB_TOKEN"`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := writeTree(t, t.TempDir(), map[string]string{"mcp.hcl": head + tc.body + "\n}\n"})
			cfg, diags := Load(dir, Options{Version: "0.1.0"})
			var errs hcl.Diagnostics
			for _, d := range diags {
				if d.Severity == hcl.DiagError {
					errs = append(errs, d)
				}
			}
			if len(errs) != 1 || errs[0].Summary != tc.summary {
				t.Fatalf("errors %q, want one %q", errorsOf(diags), tc.summary)
			}
			d := errs[0]
			if d.Subject == nil || d.Subject.Start.Line != tc.line {
				t.Errorf("%q points at %v, want line %d", d.Summary, d.Subject, tc.line)
			}
			for _, w := range tc.detail {
				if !strings.Contains(d.Detail, w) {
					t.Errorf("detail %q does not say %q", d.Detail, w)
				}
			}
			if strings.Contains(d.Detail, "hunter2") || strings.Contains(d.Detail, "github_pat_") {
				t.Errorf("detail %q repeats a credential", d.Detail)
			}
			if len(cfg.Servers) != 0 {
				t.Errorf("a server with an error is kept: %+v", cfg.Servers)
			}
		})
	}
}

// TestRemoteValidate: in validate, a url that is unknown leaves the
// server out as an unknown command does, and unknown headers and auth
// values are skipped, not errors.
func TestRemoteValidate(t *testing.T) {
	dir := writeTree(t, t.TempDir(), map[string]string{"mcp.hcl": `
variable "host" { type = string }
variable "org" { type = string }
variable "oauth" { type = bool }
variable "token_env" { type = string }

server "unknown_url" {
  url = "https://${var.host}/mcp"
}

server "known_url" {
  url     = "https://mcp.example.com/mcp"
  headers = { X-Org = var.org }
  auth {
    oauth      = var.oauth
    bearer_env = var.token_env
  }
}
`})
	cfg := mustLoad(t, dir, Options{Validate: true})
	if len(cfg.Servers) != 1 || cfg.Servers[0].Name != "known_url" || cfg.Servers[0].URL != "https://mcp.example.com/mcp" {
		t.Errorf("servers = %+v, want known_url alone", cfg.Servers)
	}
}

// TestSensitiveRemote: a sensitive value in url or headers is an error
// that says how a remote server gets a secret.
func TestSensitiveRemote(t *testing.T) {
	dir := writeTree(t, t.TempDir(), map[string]string{"mcp.hcl": `
variable "key" {
  type      = string
  default   = "x"
  sensitive = true
}
server "s" {
  url     = "https://mcp.example.com/mcp"
  headers = { X-Org = var.key }
}
`})
	_, diags := Load(dir, Options{})
	if len(diags) != 1 || diags[0].Summary != "Sensitive value in server configuration" || !strings.Contains(diags[0].Detail, `auth { bearer_env = "NAME" }`) {
		t.Errorf("diagnostics %v, want one saying to use auth { bearer_env }", diags)
	}
}

// TestCommandServerJSON: the JSON of command servers, which
// plan.ConfigDigest hashes, is byte for byte what it was before remote
// servers (URL, Headers and Auth are left out when empty), so that no
// existing plan goes stale.
func TestCommandServerJSON(t *testing.T) {
	dir := writeTree(t, t.TempDir(), map[string]string{"mcp.hcl": `
server "bare" {
  command = ["srv"]
}

server "full" {
  command  = ["uvx", "mcp-server-time==2026.8.18"]
  env      = ["TZ", "PATH", "HOME"]
  protocol = "legacy"
  timeout  = "1m"
  version  = "1.2.3"

  client_capabilities = {
    roots = { listChanged = true }
  }

  tool "get_current_time" {
    version = "1.0.0"
  }

  sandbox {
    filesystem {
      read = ["/etc/ssl/certs"]
    }
    network {
      allow = ["api.github.com:443"]
    }
    limits {
      memory = "1GiB"
    }
  }

  taint {
    sources = ["resources:*"]
    sinks   = ["convert_time"]
  }
}
`})
	cfg := mustLoad(t, dir, Options{Version: "0.1.0"})
	// Written by the code before url servers existed.
	want := []string{
		`{"Name":"bare","Addr":"server.bare","Command":["srv"],"Env":null,"Protocol":"auto","Timeout":30000000000,"Version":"","ToolVersions":null,"ClientCapabilities":null,"Policy":{}}`,
		`{"Name":"full","Addr":"server.full","Command":["uvx","mcp-server-time==2026.8.18"],"Env":["TZ","PATH","HOME"],"Protocol":"legacy","Timeout":60000000000,"Version":"1.2.3","ToolVersions":{"get_current_time":"1.0.0"},"ClientCapabilities":{"roots":{"listChanged":true}},"Policy":{"taint":{"sources":["resources:*"],"sinks":["convert_time"]},"sandbox":{"filesystem":{"read":["/etc/ssl/certs"],"write":[]},"network":{"allow":["api.github.com:443"]},"limits":{"memory":1073741824}}}}`,
	}
	var got []string
	for _, s := range cfg.Servers {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(b))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("JSON of command servers changed (-want +got):\n%s", diff)
	}
}
