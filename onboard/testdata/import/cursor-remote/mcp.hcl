# Imported by `mcpform import` from Cursor's configuration (.cursor/mcp.json).
# Review every command before `mcpform plan`: each runs as written, without a shell.

mcpform {
  required_version = ">= 0.1.0"
}

server "search" {
  # WARNING: the client sent a credential in the url's query parameter "api_key" and the header "X-Api-Key", not copied: see auth { bearer_env }.
  url = "https://search.example.com/mcp?region=eu"
  headers = {
    "X-Region" = "eu"
  }
}

server "notion" {
  url = "https://mcp.notion.com/mcp"
}

server "time" {
  # env passes PATH and HOME: uvx needs PATH to find python and HOME for uv's cache; a server gets only the variables env lists.
  command = ["uvx", "mcp-server-time==2026.8.18"]
  env     = ["PATH", "HOME"]
}

# Not imported (mcpform import's warnings say what to do):
#   "playwright": http:// to "0.0.0.0:8931", which is not a loopback host
#   "socket": a WebSocket (wss://) url: mcpform speaks Streamable HTTP and HTTP+SSE only
