package lang

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hashicorp/hcl/v2"

	"github.com/mcpform/mcpform/policy"
)

// writeTree writes files (slash paths relative to dir) and returns dir.
func writeTree(t testing.TB, dir string, files map[string]string) string {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func mustLoad(t *testing.T, dir string, opts Options) *Config {
	t.Helper()
	cfg, diags := Load(dir, opts)
	if len(diags) > 0 {
		var buf bytes.Buffer
		WriteDiagnostics(&buf, diags, cfg.Files, false, 0)
		t.Fatalf("Load(%s): unexpected diagnostics:\n%s", dir, buf.String())
	}
	return cfg
}

func errorsOf(diags hcl.Diagnostics) []string {
	var out []string
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			out = append(out, d.Summary)
		}
	}
	return out
}

// ignoreRanges compares servers without their source ranges.
var ignoreRanges = cmpopts.IgnoreFields(Server{}, "DeclRange")

func TestLoadEvaluatesEverything(t *testing.T) {
	dir := writeTree(t, t.TempDir(), map[string]string{
		"mcp.hcl": `
mcpform {
  required_version = ">= 0.1.0, < 1.0.0"
  lockfile         = "locks/team.lock"
}

variable "notes_dir" {
  type    = string
  default = "~/notes"
}

variable "hosts" {
  type    = list(string)
  default = ["api.github.com"]
}

locals {
  # written before what it uses
  allow = [for h in var.hosts : "${h}:443"]
  pkg   = format("mcp-server-time==%s", local.ver)
  ver   = "2026.8.18"
}

server "time" {
  command  = ["uvx", local.pkg]
  env      = ["TZ", "LANG", "PATH", "HOME"]
  protocol = "2026-07-28"
  timeout  = "1m30s"
  version  = "1.4.0"

  client_capabilities = {
    elicitation = {}
    roots       = { listChanged = true }
  }

  sandbox {
    filesystem {
      read  = [var.notes_dir, "/etc/ssl/certs"]
      write = ["${path.tmp}/work", "$${TMP}"]
    }
    network {
      allow = concat(local.allow, ["*.Example.COM:8443", "[::1]:80", "API.github.com:443"])
    }
  }

  taint {
    sources = ["get_current_time", "resources:*"]
    sinks   = ["convert_time"]
  }

  tool "get_current_time" {
    version = "1.0.0"
  }
}
`,
		"sandboxless.mcp.hcl": `
server "bare" {
  command = [upper("x"), join(",", ["a", "b"]), tostring(length("four")), path.root, path.module]
}

server "empty_sandbox" {
  command = ["x"]
  sandbox {}
}
`,
	})
	cfg := mustLoad(t, dir, Options{Version: "0.1.0"})
	if want := filepath.Join(dir, "locks", "team.lock"); cfg.Lockfile != want {
		t.Errorf("Lockfile = %q, want %q", cfg.Lockfile, want)
	}
	want := []*Server{
		{
			Name: "bare", Addr: "server.bare",
			Command:  []string{"X", "a,b", "4", ".", "."},
			Protocol: "auto", Timeout: 30 * time.Second,
		},
		{
			Name: "empty_sandbox", Addr: "server.empty_sandbox",
			Command: []string{"x"}, Protocol: "auto", Timeout: 30 * time.Second,
			Policy: policy.Policy{Sandbox: &policy.Sandbox{
				Filesystem: policy.Filesystem{Read: []string{}, Write: []string{}},
				Network:    policy.Network{Allow: []string{}},
			}},
		},
		{
			Name: "time", Addr: "server.time",
			Command:            []string{"uvx", "mcp-server-time==2026.8.18"},
			Env:                []string{"TZ", "LANG", "PATH", "HOME"},
			Protocol:           "2026-07-28",
			Timeout:            90 * time.Second,
			Version:            "1.4.0",
			ToolVersions:       map[string]string{"get_current_time": "1.0.0"},
			ClientCapabilities: json.RawMessage(`{"elicitation":{},"roots":{"listChanged":true}}`),
			Policy: policy.Policy{
				Taint: &policy.Taint{Sources: []string{"get_current_time", "resources:*"}, Sinks: []string{"convert_time"}},
				Sandbox: &policy.Sandbox{
					Filesystem: policy.Filesystem{Read: []string{"~/notes", "/etc/ssl/certs"}, Write: []string{"${TMP}/work", "${TMP}"}},
					// Canonical form, duplicates dropped.
					Network: policy.Network{Allow: []string{"api.github.com:443", "*.example.com:8443", "[::1]:80"}},
				},
			},
		},
	}
	if diff := cmp.Diff(want, cfg.Servers, ignoreRanges); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	if r := cfg.Servers[2].DeclRange; r.Filename != filepath.Join(dir, "mcp.hcl") || r.Start.Line != 24 {
		t.Errorf("DeclRange = %v, want mcp.hcl line 24", r)
	}
	if len(cfg.Files) != 2 {
		t.Errorf("Files has %d entries, want 2", len(cfg.Files))
	}
}

// TestSandboxLimits: a limits block takes sizes as strings or bytes and
// counts as numbers, from literals, variables and locals; an empty block,
// like none, leaves every limit at its default (nil).
func TestSandboxLimits(t *testing.T) {
	dir := writeTree(t, t.TempDir(), map[string]string{
		"mcp.hcl": `
variable "memory" {
  type    = string
  default = "1GiB"
}
variable "procs" {
  type    = number
  default = 128
}
locals {
  mib = 1024 * 1024
}

server "all" {
  command = ["srv"]
  sandbox {
    limits {
      memory    = var.memory
      processes = var.procs * 2
      files     = "4096"
      file_size = 512 * local.mib
    }
  }
}

server "some" {
  command = ["srv"]
  sandbox {
    filesystem {
      read = ["/srv"]
    }
    limits {
      file_size = "2 GB"
    }
  }
}

server "empty" {
  command = ["srv"]
  sandbox {
    limits {}
  }
}
`,
	})
	cfg := mustLoad(t, dir, Options{Version: "0.1.0"})
	got := map[string]*policy.Limits{}
	for _, s := range cfg.Servers {
		got[s.Name] = s.Policy.Sandbox.Limits
	}
	want := map[string]*policy.Limits{
		"all":   {Memory: 1 << 30, Processes: 256, Files: 4096, FileSize: 512 << 20},
		"some":  {FileSize: 2e9},
		"empty": nil,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("limits (-want +got):\n%s", diff)
	}
	if fs := cfg.Servers[2].Policy.Sandbox.Filesystem; cfg.Servers[2].Name != "some" || len(fs.Read) != 1 {
		t.Errorf("server %s filesystem = %+v, want the read path beside the limits", cfg.Servers[2].Name, fs)
	}
}

func TestVariableSources(t *testing.T) {
	dir := writeTree(t, t.TempDir(), map[string]string{
		"mcp.hcl": `
variable "a" { default = "default" }
variable "b" { default = "default" }
variable "c" { default = "default" }
variable "d" { default = "default" }
variable "ports" {
  type    = list(number)
  default = []
}
variable "opts" {
  type = object({ name = string, level = optional(number, 3) })
  default = { name = "x" }
}
server "s" {
  command = concat([var.a, var.b, var.c, var.d], [for p in var.ports : tostring(p)], [var.opts.name, tostring(var.opts.level)])
}
`,
		"one.hcl":   "b = \"file1\"\nc = \"file1\"\n",
		"two.json":  `{"c": "file2", "d": "file2"}`,
		"typed.hcl": "opts = { name = \"y\" }\n",
	})
	env := map[string]string{"MCPFORM_VAR_a": "env", "MCPFORM_VAR_b": "env", "MCPFORM_VAR_ports": "[80, 443]", "HOME": "/must/not/matter"}
	var looked []string
	cfg := mustLoad(t, dir, Options{
		Vars:     map[string]string{"d": "flag"},
		VarFiles: []string{filepath.Join(dir, "one.hcl"), filepath.Join(dir, "two.json"), filepath.Join(dir, "typed.hcl")},
		Getenv: func(k string) string {
			looked = append(looked, k)
			return env[k]
		},
	})
	want := []string{"env", "file1", "file2", "flag", "80", "443", "y", "3"}
	if diff := cmp.Diff(want, cfg.Servers[0].Command); diff != "" {
		t.Errorf("command (-want +got):\n%s", diff)
	}
	for _, k := range looked {
		if !strings.HasPrefix(k, envVarPrefix) {
			t.Errorf("Load read environment variable %q; it may read only %s<name>", k, envVarPrefix)
		}
	}

	_, diags := Load(dir, Options{Vars: map[string]string{"nope": "x", "ports": "[80,"}})
	if diff := cmp.Diff([]string{"Value for undeclared variable", "Invalid value for input variable"}, errorsOf(diags)); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

// TestSensitiveNeverShown checks that no diagnostic, in text or JSON, shows
// the value of a sensitive variable, however it fails.
func TestSensitiveNeverShown(t *testing.T) {
	const secret = "hunter2-SECRET"
	cases := map[string]struct {
		hcl      string
		varFile  string
		vars     map[string]string
		wantErrs []string
	}{
		"in command": {
			hcl:      `server "s" { command = ["x", "--token=${var.token}"] }`,
			wantErrs: []string{"Sensitive value in server configuration"},
		},
		"through a local": {
			hcl:      `locals { t = { v = var.token } }` + "\n" + "server \"s\" {\n env = [local.t.v]\n command = [\"x\"]\n}",
			wantErrs: []string{"Sensitive value in server configuration"},
		},
		"validation message": {
			hcl:      `server "s" { command = ["x"] }`,
			vars:     map[string]string{"token": secret},
			wantErrs: []string{"Invalid value for variable"},
		},
		"function error": {
			hcl:      `server "s" { command = [tonumber(var.token)] }`,
			wantErrs: []string{"Invalid function argument"},
		},
		"bad type in var file": {
			hcl:      `server "s" { command = ["x"] }`,
			varFile:  `token = ["` + secret + `"]`,
			wantErrs: []string{"Invalid value for input variable"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			files := map[string]string{"mcp.hcl": `
variable "token" {
  type      = string
  default   = "` + secret + `-but-valid-and-long"
  sensitive = true
  validation {
    condition     = length(var.token) > 20
    error_message = "token ${var.token} is too short"
  }
}
` + tc.hcl}
			opts := Options{Vars: tc.vars}
			if tc.varFile != "" {
				files["vars.hcl"] = tc.varFile
			}
			dir := writeTree(t, t.TempDir(), files)
			if tc.varFile != "" {
				opts.VarFiles = []string{filepath.Join(dir, "vars.hcl")}
			}
			cfg, diags := Load(dir, opts)
			if diff := cmp.Diff(tc.wantErrs, errorsOf(diags)); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			var text, js bytes.Buffer
			WriteDiagnostics(&text, diags, cfg.Files, false, 0)
			WriteDiagnosticsJSON(&js, diags, cfg.Files)
			// The default is in mcp.hcl and snippets may quote source
			// lines; only the values given from outside must never show.
			for _, out := range []string{text.String(), js.String()} {
				for _, line := range strings.Split(out, "\n") {
					if strings.Contains(line, secret) && !strings.Contains(line, "default") {
						t.Errorf("output shows the secret:\n%s", out)
						break
					}
				}
			}
		})
	}
}

func TestModulesNested(t *testing.T) {
	dir := writeTree(t, t.TempDir(), map[string]string{
		"mcp.hcl": `
module "github" {
  source = "./modules/github"
  token_env = "GH_TOKEN"
}
server "time" {
  command = ["uvx", "mcp-server-time==2025.8.4"]
  env     = ["PATH", "HOME"]
}
`,
		"modules/github/mcp.hcl": `
variable "token_env" { type = string }
server "issues" {
  command = ["node", "${path.module}/issues.js"]
  env     = [var.token_env]
}
module "actions" {
  source = "./actions"
  env    = var.token_env
}
`,
		"modules/github/actions/mcp.hcl": `
variable "env" {}
server "runs" {
  command = ["node", "${path.module}/runs.js", path.root]
  env     = [var.env]
}
`,
	})
	cfg := mustLoad(t, dir, Options{})
	type nameAddr struct{ Name, Addr, Arg string }
	var got []nameAddr
	for _, s := range cfg.Servers {
		got = append(got, nameAddr{s.Name, s.Addr, s.Command[len(s.Command)-1]})
	}
	want := []nameAddr{
		{"github.actions.runs", "module.github.module.actions.server.runs", "."},
		{"github.issues", "module.github.server.issues", "modules/github/issues.js"},
		{"time", "server.time", "mcp-server-time==2025.8.4"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
}

func TestNoConfiguration(t *testing.T) {
	_, diags := Load(t.TempDir(), Options{})
	if diff := cmp.Diff([]string{"No configuration files"}, errorsOf(diags)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	_, diags = Load(filepath.Join(t.TempDir(), "missing"), Options{})
	if diff := cmp.Diff([]string{"Cannot read configuration directory"}, errorsOf(diags)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestIsConfigFile(t *testing.T) {
	for name, want := range map[string]bool{
		"mcp.hcl": true, "github.mcp.hcl": true, ".mcp.hcl": false, ".hidden.mcp.hcl": false,
		"mcp.hcl.example": false, "vars.hcl": false, "mcp.lock": false,
	} {
		if got := isConfigFile(name); got != want {
			t.Errorf("isConfigFile(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestParseSource(t *testing.T) {
	good := map[string]Source{
		"./m":       {Local: "./m"},
		"../shared": {Local: "../shared"},
		"git::https://github.com/acme/mods.git//github?ref=v1.2.0": {URL: "https://github.com/acme/mods.git", Subdir: "github", Ref: "v1.2.0"},
		"git::https://github.com/acme/mods.git?ref=abc123":         {URL: "https://github.com/acme/mods.git", Ref: "abc123"},
		"git::file:///tmp/repo//a/b?ref=v1":                        {URL: "file:///tmp/repo", Subdir: "a/b", Ref: "v1"},
		"git::git@github.com:acme/mods.git//x?ref=v2":              {URL: "git@github.com:acme/mods.git", Subdir: "x", Ref: "v2"},
		"git::ssh://git@github.com/acme/mods.git//x/?ref=v2":       {URL: "ssh://git@github.com/acme/mods.git", Subdir: "x", Ref: "v2"},
	}
	for src, want := range good {
		got, err := parseSource(src)
		if err != nil {
			t.Errorf("parseSource(%q): %v", src, err)
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("parseSource(%q) (-want +got):\n%s", src, diff)
		}
	}
	for _, src := range []string{
		"modules/x", "/abs", "", "registry.example.com/a/b",
		"git::https://github.com/acme/mods.git", "git::https://h/r.git?ref=", "git::https://h/r.git?ref=a&ref=b",
		"git::https://h/r.git?ref=v1&depth=1", "git::http://h/r.git?ref=v1", "git::ext::sh -c x?ref=v1",
		"git::-upload-pack=x?ref=v1", "git::https://h/r.git//../x?ref=v1", "git::https://h/r.git//?ref=v1",
		"git::https://h/r.git?ref=--upload-pack=x", "git::https://?ref=v1",
	} {
		if got, err := parseSource(src); err == nil {
			t.Errorf("parseSource(%q) = %+v, want an error", src, got)
		}
	}
}
