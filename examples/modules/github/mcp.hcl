# A module, as mcp.hcl.example at the repository root uses it: the GitHub
# MCP server, its token passed by name. A git module has the same files; see
# the module block in mcp.hcl.example for the git form of source.

variable "token_env" {
  type        = string
  description = "The name of the environment variable that holds the GitHub token."
}

server "issues" {
  # A release binary: it needs neither PATH nor HOME, only the token.
  command = ["github-mcp-server", "stdio", "--toolsets", "issues"]
  env     = [var.token_env]

  sandbox {
    network {
      allow = ["api.github.com:443"]
    }
  }
}
