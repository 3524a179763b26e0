package lang

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestValidateWithoutValues loads a module's directory as validate does:
// its required variables have no value, so everything that depends on them
// is unknown and skipped, not an error; values that are known are still
// checked, and without Validate (plan) the missing values are errors.
func TestValidateWithoutValues(t *testing.T) {
	dir := writeTree(t, t.TempDir(), map[string]string{
		"mcp.hcl": `
variable "dir" {
  type = string
  validation {
    condition     = startswith(var.dir, "/")
    error_message = "dir must be absolute."
  }
}
variable "ports" { type = list(number) }
variable "tools" { type = map(string) }
variable "write" { type = bool }
variable "caps" { type = any }

locals {
  argv = ["go", "run", var.dir]
}

server "unknown" {
  command             = local.argv
  env                 = [upper(var.dir)]
  timeout             = "${length(var.ports)}s"
  version             = var.dir
  protocol            = var.write ? "auto" : "legacy"
  client_capabilities = var.caps
  dynamic "tool" {
    for_each = var.tools
    labels   = [tool.key]
    content {
      version = tool.value
    }
  }
  sandbox {
    filesystem {
      read = [var.dir]
    }
    network {
      allow = ["${var.dir}:443"]
    }
    limits {
      memory    = var.dir
      processes = var.ports[0]
    }
  }
  taint {
    sources = [var.dir]
    sinks   = var.write ? [] : ["add_note"]
  }
}

server "known" {
  command = ["uvx", "mcp-server-time==2026.8.18"]
  env     = var.write ? ["PATH", "HOME"] : ["PATH", "HOME", "TZ"]
}

module "child" {
  source = "./child"
  dir    = var.dir
}
`,
		"child/mcp.hcl": `
variable "dir" { type = string }
server "s" {
  command = ["server", var.dir]
}
`,
	})
	cfg := mustLoad(t, dir, Options{Validate: true})
	var names []string
	for _, s := range cfg.Servers {
		names = append(names, s.Name)
	}
	// A server whose command is unknown is left out: there is nothing to
	// start yet. Its other settings were checked as far as they are known.
	if diff := cmp.Diff([]string{"known"}, names); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}

	// plan: every missing value is an error.
	_, diags := Load(dir, Options{})
	want := []string{"No value for required variable", "No value for required variable", "No value for required variable",
		"No value for required variable", "No value for required variable"}
	if diff := cmp.Diff(want, errorsOf(diags)); diff != "" {
		t.Errorf("without Validate (-want +got):\n%s", diff)
	}

	// A value that is given is checked, in validate too.
	_, diags = Load(dir, Options{Validate: true, Vars: map[string]string{"dir": "relative"}})
	if errs := errorsOf(diags); !slices.Contains(errs, "Invalid value for variable") {
		t.Errorf("validate with a value its validation refuses: errors %q", errs)
	}

	// Known errors are still reported next to unknown values.
	bad := writeTree(t, t.TempDir(), map[string]string{
		"mcp.hcl": `
variable "dir" { type = string }
server "s" {
  command = ["server", var.dir]
  timeout = "forever"
  env     = ["A=b", var.dir]
}
`,
	})
	_, diags = Load(bad, Options{Validate: true})
	if diff := cmp.Diff([]string{"Invalid timeout"}, errorsOf(diags)); diff != "" {
		t.Errorf("validate of known errors (-want +got):\n%s", diff)
	}
}

// TestValidateModuleDir validates a module's own directory, as a user runs
// mcpform validate in it: its required inputs are unknown.
func TestValidateModuleDir(t *testing.T) {
	cfg := mustLoad(t, "../examples/shared-module/modules/notes", Options{Validate: true, Version: "0.1.0"})
	if len(cfg.Servers) != 1 {
		t.Errorf("servers = %d, want 1", len(cfg.Servers))
	}
	// Its command is known and its env is not: the server is kept, and
	// no launcher warning is guessed from an unknown env.
	cfg = mustLoad(t, "../examples/modules/github", Options{Validate: true, Version: "0.1.0"})
	if len(cfg.Servers) != 1 {
		t.Errorf("servers = %d, want 1", len(cfg.Servers))
	}
}
