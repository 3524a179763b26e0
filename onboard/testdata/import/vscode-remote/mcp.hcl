# Imported by `mcpform import` from VS Code's configuration (.vscode/mcp.json).
# Review every command before `mcpform plan`: each runs as written, without a shell.

mcpform {
  required_version = ">= 0.1.0"
}

server "github" {
  # The client read the Authorization token from GITHUB_TOKEN: set it in the environment.
  url = "https://api.githubcopilot.com/mcp/"
  headers = {
    "X-MCP-Readonly" = "true"
  }
  auth {
    bearer_env = "GITHUB_TOKEN"
  }
}

server "tracker" {
  # The Authorization token came from a VS Code input: set TRACKER_TOKEN in the environment.
  url = "https://tracker.example.com/mcp"
  auth {
    bearer_env = "TRACKER_TOKEN"
  }
}

server "docs" {
  # HTTP+SSE: plan finds it by the spec's fallback and the lock pins it; a Streamable HTTP endpoint, where the server has one (often the same URL without /sse, "https://docs.example.com/v1/"), is the one to prefer.
  url = "https://docs.example.com/v1/sse"
}

server "dev" {
  url = "http://localhost:3000/mcp"
}

# Not imported (mcpform import's warnings say what to do):
#   "lan": http:// to "192.168.1.20:8080", which is not a loopback host
