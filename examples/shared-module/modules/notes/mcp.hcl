# A module: the same file convention as a root configuration (mcp.hcl plus
# *.mcp.hcl), whose variables are the module block's inputs.

variable "variant" {
  type        = string
  default     = "v1"
  description = "Which surface the notes server serves (v1, rug or v2)."

  validation {
    condition     = contains(["v1", "rug", "v2"], var.variant)
    error_message = "variant is one of v1, rug and v2."
  }
}

variable "allow_writes" {
  type        = bool
  description = "Whether agents may add notes. When false, add_note is a taint sink."
}

locals {
  # path.module is this directory relative to the configuration that uses
  # the module ("../modules/notes"); servers start in that configuration's
  # directory, so the notes server is two levels up from here.
  server_dir = "${path.module}/../../../servers/notes"
  sinks      = var.allow_writes ? [] : ["add_note"]
}

server "notes" {
  command = ["go", "run", local.server_dir, "-variant", var.variant]
  version = "1.0.0"

  taint {
    sources = ["search_notes", "resources:*"]
    sinks   = local.sinks
  }
}
