# Imported by `mcpform import` from VS Code's configuration (.vscode/mcp.json).
# Review every command before `mcpform plan`: each runs as written, without a shell.

mcpform {
  required_version = ">= 0.1.0"
}

server "Perplexity" {
  # Set in the environment (the client file's values were not copied): PERPLEXITY_API_KEY.
  # env passes PATH and HOME: npx needs PATH to find node (and the package's own commands) and HOME for npm's package cache; a server gets only the variables env lists.
  command = ["npx", "-y", "server-perplexity-ask@0.1.3"]
  env     = ["PERPLEXITY_API_KEY", "PATH", "HOME"]
}

server "fetch" {
  # WARNING: uvx package "mcp-server-fetch>=2025.1" is not pinned: use "mcp-server-fetch==VERSION".
  # env passes PATH and HOME: uvx needs PATH to find python and HOME for uv's cache; a server gets only the variables env lists.
  # WARNING: the client read variables from "${workspaceFolder}/.env"; list the ones the server needs in env.
  command = ["uvx", "--from", "mcp-server-fetch>=2025.1", "mcp-server-fetch"]
  env     = ["PATH", "HOME"]
}

server "workspace_files" {
  # Imported from "workspace files" (renamed: a server name must be an identifier).
  # WARNING: argument 3 ("${workspaceFolder}") uses ${workspaceFolder}, which mcpform does not expand.
  # env passes PATH and HOME: npx needs PATH to find node (and the package's own commands) and HOME for npm's package cache; a server gets only the variables env lists.
  command = ["npx", "-y", "@modelcontextprotocol/server-filesystem@2026.8.31", "$${workspaceFolder}"]
  env     = ["PATH", "HOME"]
}

server "github" {
  url = "https://api.githubcopilot.com/mcp/"
}
