# Imported by `mcpform import` from Claude Desktop's configuration (claude_desktop_config.json).
# Review every command before `mcpform plan`: each runs as written, without a shell.

mcpform {
  required_version = ">= 0.1.0"
}

server "memory" {
  # WARNING: the command runs through cmd, which exists only on Windows.
  # WARNING: npx package "@modelcontextprotocol/server-memory" is not pinned: use "@modelcontextprotocol/server-memory@VERSION".
  # Set in the environment (the client file's values were not copied): MEMORY_FILE_PATH.
  # env passes PATH and HOME: npx needs PATH to find node (and the package's own commands) and HOME for npm's package cache; a server gets only the variables env lists.
  command = ["cmd", "/c", "npx", "-y", "@modelcontextprotocol/server-memory"]
  env     = ["MEMORY_FILE_PATH", "PATH", "HOME"]
}

server "weather" {
  # WARNING: the command is a Windows path: it works only on Windows.
  # WARNING: argument 1 ("C:\\Users\\alice\\mcp\\weather\\build\\index.js") is a Windows path: it works only on Windows.
  command = ["C:\\Program Files\\nodejs\\node.exe", "C:\\Users\\alice\\mcp\\weather\\build\\index.js"]
}

server "sqlite" {
  # WARNING: uvx package "mcp-server-sqlite" is not pinned: use "mcp-server-sqlite==VERSION".
  # WARNING: argument 3 ("%USERPROFILE%\\test.db") uses %USERPROFILE%, which mcpform does not expand.
  # env passes PATH and HOME: uvx needs PATH to find python and HOME for uv's cache; a server gets only the variables env lists.
  command = ["uvx", "mcp-server-sqlite", "--db-path", "%USERPROFILE%\\test.db"]
  env     = ["PATH", "HOME"]
}

server "notes" {
  # WARNING: argument 1 (".\\notes_server.py") is a Windows path: it works only on Windows.
  # Set in the environment (the client file's values were not copied): PYTHONUTF8.
  command = ["python", ".\\notes_server.py"]
  env     = ["PYTHONUTF8"]
}
