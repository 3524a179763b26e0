package lang

import (
	"fmt"
	"strings"
	"testing"
)

// benchConfig writes a configuration of 20 modules (each its own directory)
// of 10 servers each: 200 servers, each with variables, locals, a sandbox,
// taint labels and tool versions, as a large real configuration would.
func benchConfig(b *testing.B) string {
	files := map[string]string{}
	var root strings.Builder
	root.WriteString("mcpform {\n  required_version = \">= 0.1.0\"\n}\n\nvariable \"home\" {\n  default = \"~/work\"\n}\n\n")
	for m := 0; m < 20; m++ {
		fmt.Fprintf(&root, "module \"team%02d\" {\n  source   = \"./modules/team%02d\"\n  data_dir = \"${var.home}/team%02d\"\n  hosts    = [\"api.example.com\", \"*.team%02d.example.com\"]\n}\n\n", m, m, m, m)
		var mod strings.Builder
		mod.WriteString("variable \"data_dir\" {\n  type = string\n  validation {\n    condition     = startswith(var.data_dir, \"~/\")\n    error_message = \"home only\"\n  }\n}\n\nvariable \"hosts\" {\n  type = list(string)\n}\n\nlocals {\n  allow = [for h in var.hosts : \"${h}:443\"]\n  pin   = \"2026.8.18\"\n}\n\n")
		for s := 0; s < 10; s++ {
			fmt.Fprintf(&mod, `server "srv%02d" {
  command  = ["uvx", format("mcp-server-%%s==%%s", "srv%02d", local.pin), "--root", var.data_dir]
  env      = ["TOKEN_%02d", "TZ"]
  protocol = "auto"
  timeout  = "45s"
  version  = "1.%d.0"
  client_capabilities = { elicitation = {} }
  sandbox {
    filesystem {
      read  = [var.data_dir, "/etc/ssl/certs"]
      write = ["${path.tmp}/srv%02d"]
    }
    network {
      allow = local.allow
    }
  }
  taint {
    sources = ["fetch", "resources:*"]
    sinks   = ["send"]
  }
  tool "fetch" {
    version = "1.0.0"
  }
}

`, s, s, s, s, s)
		}
		files[fmt.Sprintf("modules/team%02d/mcp.hcl", m)] = mod.String()
	}
	files["mcp.hcl"] = root.String()
	return writeTree(b, b.TempDir(), files)
}

// BenchmarkLoad200Servers20Modules measures Load (read, parse, evaluate,
// validate) of 200 servers across 20 modules. Target: under 100 ms.
func BenchmarkLoad200Servers20Modules(b *testing.B) {
	dir := benchConfig(b)
	cfg, diags := Load(dir, Options{Version: "0.1.0"})
	if len(diags) > 0 || len(cfg.Servers) != 200 {
		b.Fatalf("%d servers, diagnostics: %v", len(cfg.Servers), diags)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, diags := Load(dir, Options{Version: "0.1.0"}); diags.HasErrors() {
			b.Fatal(diags)
		}
	}
}
