# Imported by `mcpform import` from Claude Desktop's configuration (claude_desktop_config.json).
# Review every command before `mcpform plan`: each runs as written, without a shell.

mcpform {
  required_version = ">= 0.1.0"
}

server "filesystem" {
  # WARNING: npx package "@modelcontextprotocol/server-filesystem" is not pinned: use "@modelcontextprotocol/server-filesystem@VERSION".
  # env passes PATH and HOME: npx needs PATH to find node (and the package's own commands) and HOME for npm's package cache; a server gets only the variables env lists.
  command = ["npx", "-y", "@modelcontextprotocol/server-filesystem", "/Users/alice/Desktop", "/Users/alice/Downloads"]
  env     = ["PATH", "HOME"]
}

server "github" {
  # Set in the environment (the client file's values were not copied): GITHUB_PERSONAL_ACCESS_TOKEN.
  # env passes PATH and HOME: npx needs PATH to find node (and the package's own commands) and HOME for npm's package cache; a server gets only the variables env lists.
  command = ["npx", "-y", "@modelcontextprotocol/server-github@2025.4.8"]
  env     = ["GITHUB_PERSONAL_ACCESS_TOKEN", "PATH", "HOME"]
}

server "time" {
  # env passes PATH and HOME: uvx needs PATH to find python and HOME for uv's cache; a server gets only the variables env lists.
  command = ["uvx", "mcp-server-time==2026.8.18", "--local-timezone=Europe/Berlin"]
  env     = ["PATH", "HOME"]
}

server "fetch" {
  # WARNING: uvx package "mcp-server-fetch" is not pinned: use "mcp-server-fetch==VERSION".
  # env passes PATH and HOME: uvx needs PATH to find python and HOME for uv's cache; a server gets only the variables env lists.
  command = ["uvx", "mcp-server-fetch"]
  env     = ["PATH", "HOME"]
}

server "weather_local" {
  # Imported from "weather.local" (renamed: a server name must be an identifier).
  # WARNING: argument 1 ("./build/index.js") is relative to the directory of mcp.hcl.
  # Set in the environment (the client file's values were not copied): WEATHER_API_KEY.
  command = ["node", "./build/index.js"]
  env     = ["WEATHER_API_KEY", "UNITS"]
}

server "postgres" {
  # WARNING: argument 3 looks like a credential: do not commit it.
  # env passes PATH and HOME: npx needs PATH to find node (and the package's own commands) and HOME for npm's package cache; a server gets only the variables env lists.
  command = ["npx", "-y", "@modelcontextprotocol/server-postgres@0.6.2", "postgresql://app:SECRET-pg-password@localhost/app"]
  env     = ["PATH", "HOME"]
}
