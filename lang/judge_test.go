package lang

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const judgeServer = `
server "time" {
  command = ["mcp-server-time"]
}
`

func TestJudges(t *testing.T) {
	dir := writeTree(t, t.TempDir(), map[string]string{"mcp.hcl": `
mcpform {
  judge "local" {
    endpoint = "http://127.0.0.1:8080/v1"
    model    = "llama"
  }
  judge "openai" {
    endpoint      = "https://API.openai.com/v1/chat/completions"
    model         = "gpt-4o-mini"
    api_key_env   = "OPENAI_API_KEY"
    timeout       = "5s"
    budget_tokens = 20000
  }
}
` + judgeServer})
	cfg := mustLoad(t, dir, Options{})
	want := []Judge{
		{Name: "local", Endpoint: "http://127.0.0.1:8080/v1/chat/completions", Model: "llama", Timeout: 30 * time.Second, BudgetTokens: 100000},
		{Name: "openai", Endpoint: "https://api.openai.com/v1/chat/completions", Model: "gpt-4o-mini", APIKeyEnv: "OPENAI_API_KEY", Timeout: 5 * time.Second, BudgetTokens: 20000},
	}
	if d := cmp.Diff(want, cfg.Judges); d != "" {
		t.Errorf("judges (-want +got):\n%s", d)
	}
	if len(cfg.Servers) != 1 {
		t.Errorf("servers: %d", len(cfg.Servers))
	}
}

func TestJudgeErrors(t *testing.T) {
	for _, tc := range []struct {
		name, body, summary, detail string
	}{
		{"no endpoint", `model = "m"`, "Missing required argument", "endpoint"},
		{"no model", `endpoint = "https://x.example/v1"`, "Missing required argument", "model"},
		{"plain http", `endpoint = "http://judge.example/v1"` + "\n" + `model = "m"`, "Invalid endpoint", "http is allowed only for a loopback host"},
		{"credentials", `endpoint = "https://u:secretpw@x.example/v1"` + "\n" + `model = "m"`, "Invalid endpoint", "api_key_env"},
		{"scheme", `endpoint = "ftp://x.example/v1"` + "\n" + `model = "m"`, "Invalid endpoint", "https://"},
		{"empty model", `endpoint = "https://x.example/v1"` + "\n" + `model = " "`, "Invalid model", "non-empty"},
		{"key env", `endpoint = "https://x.example/v1"` + "\n" + `model = "m"` + "\n" + `api_key_env = "1BAD"`, "Invalid environment variable name", "not a valid environment variable name"},
		{"key itself", `endpoint = "https://x.example/v1"` + "\n" + `model = "m"` + "\n" + `api_key_env = "sk-proj-abcdefghijklmnopqrstuvwxyz0123"`, "Invalid environment variable name", "not the key"},
		{"key assignment", `endpoint = "https://x.example/v1"` + "\n" + `model = "m"` + "\n" + `api_key_env = "K=v"`, "Invalid environment variable name", `write "K"`},
		{"timeout", `endpoint = "https://x.example/v1"` + "\n" + `model = "m"` + "\n" + `timeout = "2h"`, "Invalid timeout", "at most 10m0s"},
		{"timeout syntax", `endpoint = "https://x.example/v1"` + "\n" + `model = "m"` + "\n" + `timeout = "soon"`, "Invalid timeout", "not a duration"},
		{"budget", `endpoint = "https://x.example/v1"` + "\n" + `model = "m"` + "\n" + `budget_tokens = 0`, "Invalid budget_tokens", "from 1 to 100000000"},
		{"budget fraction", `endpoint = "https://x.example/v1"` + "\n" + `model = "m"` + "\n" + `budget_tokens = 1.5`, "Invalid budget_tokens", "whole number"},
		{"unknown", `endpoint = "https://x.example/v1"` + "\n" + `model = "m"` + "\n" + `api_key = "x"`, "Unsupported argument", "api_key"},
		{"variable", `endpoint = var.url` + "\n" + `model = "m"`, "Variables not allowed", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeTree(t, t.TempDir(), map[string]string{"mcp.hcl": "mcpform {\n judge \"j\" {\n" + tc.body + "\n }\n}\n" + judgeServer})
			_, diags := Load(dir, Options{})
			var found bool
			for _, d := range diags {
				if d.Summary == tc.summary && strings.Contains(d.Detail+d.Summary, tc.detail) {
					found = true
				}
				if strings.Contains(d.Detail, "secretpw") || strings.Contains(d.Detail, "sk-proj") {
					t.Errorf("a diagnostic repeats a credential: %s", d.Detail)
				}
			}
			if !found {
				t.Errorf("diagnostics %v, want %q with %q", diags, tc.summary, tc.detail)
			}
		})
	}
}

func TestJudgeDuplicateAndModule(t *testing.T) {
	dir := writeTree(t, t.TempDir(), map[string]string{"mcp.hcl": `
mcpform {
  judge "j" {
    endpoint = "https://x.example/v1"
    model    = "m"
  }
}
mcpform {
  judge "j" {
    endpoint = "https://y.example/v1"
    model    = "m"
  }
}
` + judgeServer})
	_, diags := Load(dir, Options{})
	if got := errorsOf(diags); len(got) != 1 || got[0] != `Duplicate judge "j"` {
		t.Errorf("duplicate: %v", got)
	}

	dir = writeTree(t, t.TempDir(), map[string]string{
		"mcp.hcl": `module "m" { source = "./m" }` + "\n" + judgeServer,
		"m/mcp.hcl": `
mcpform {
  judge "j" {
    endpoint = "https://x.example/v1"
    model    = "m"
  }
}
server "s" { command = ["x"] }
`})
	_, diags = Load(dir, Options{})
	if got := errorsOf(diags); len(got) != 1 || got[0] != "Judge declared in a module" {
		t.Errorf("module: %v", got)
	}
}
