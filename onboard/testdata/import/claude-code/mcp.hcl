# Imported by `mcpform import` from Claude Code's configuration (.mcp.json).
# Review every command before `mcpform plan`: each runs as written, without a shell.

mcpform {
  required_version = ">= 0.1.0"
}

server "everything" {
  # env passes PATH and HOME: npx needs PATH to find node (and the package's own commands) and HOME for npm's package cache; a server gets only the variables env lists.
  command = ["npx", "-y", "@modelcontextprotocol/server-everything@2026.8.31"]
  env     = ["PATH", "HOME"]
}

server "airtable" {
  # WARNING: npx package "airtable-mcp-server" is not pinned: use "airtable-mcp-server@VERSION".
  # Set in the environment (the client file's values were not copied): AIRTABLE_API_KEY.
  # env passes PATH and HOME: npx needs PATH to find node (and the package's own commands) and HOME for npm's package cache; a server gets only the variables env lists.
  command = ["npx", "-y", "airtable-mcp-server"]
  env     = ["AIRTABLE_API_KEY", "PATH", "HOME"]
}

server "project-tools" {
  # WARNING: the command is relative to the directory of mcp.hcl.
  # WARNING: argument 2 ("${CLAUDE_PROJECT_DIR:-.}") uses ${CLAUDE_PROJECT_DIR:-.}, which mcpform does not expand.
  # WARNING: the client ran this from "/srv/project"; mcpform runs it from the directory of mcp.hcl.
  command = ["scripts/mcp-server.sh", "--root", "$${CLAUDE_PROJECT_DIR:-.}"]
}

server "sentry" {
  # The client sent a token in the Authorization header (not copied): set SENTRY_TOKEN in the environment.
  # WARNING: the client sent a credential in the url's query parameter "token", not copied; auth sends only the bearer token.
  url = "https://mcp.sentry.dev/mcp"
  auth {
    bearer_env = "SENTRY_TOKEN"
  }
}

server "linear" {
  # HTTP+SSE: plan finds it by the spec's fallback and the lock pins it; a Streamable HTTP endpoint, where the server has one (often the same URL without /sse, "https://mcp.linear.app/"), is the one to prefer.
  url = "https://mcp.linear.app/sse"
}

server "github" {
  # The client read the Authorization token from GITHUB_PAT: set it in the environment.
  url = "https://api.githubcopilot.com/mcp/"
  headers = {
    "X-MCP-Toolsets" = "repos,issues,pull_requests"
  }
  auth {
    bearer_env = "GITHUB_PAT"
  }
}
