# A server run in an OS sandbox (Linux: Landlock, seccomp, namespaces). It
# may read var.notes_dir, write only its private temporary directory, and
# reach the network only through mcpform's egress proxy, here not at all.

variable "notes_dir" {
  type        = string
  default     = "~/notes"
  description = "The directory the filesystem server may read."

  validation {
    condition     = startswith(var.notes_dir, "/") || startswith(var.notes_dir, "~/")
    error_message = "notes_dir must be absolute or start with ~/, so the lock means the same on every machine."
  }
}

server "files" {
  command = [
    "npx", "-y", "@modelcontextprotocol/server-filesystem@2026.8.31",
    # The server's own argument: the directory it serves. ${TMP} is written
    # as path.tmp (or $${TMP}); mcpform run expands it.
    "${path.tmp}/x",
  ]
  env     = ["PATH", "HOME"] # npx finds node through PATH, its cache under HOME
  timeout = "60s"            # npx may download the package on first use

  sandbox {
    filesystem {
      read  = [var.notes_dir]
      write = ["${path.tmp}/x"]
    }
    network {
      allow = [] # no network at all
    }
  }
}

server "notes" {
  command = ["go", "run", "../servers/notes"]

  sandbox {
    filesystem {
      read = ["~/go/pkg/mod", "~/.cache/go-build"]
    }
    network {
      # go run may fetch modules; nothing else.
      allow = ["proxy.golang.org:443", "sum.golang.org:443"]
    }
  }
}
