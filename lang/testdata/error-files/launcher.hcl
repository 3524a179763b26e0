# Launchers whose env does not pass what they need are warned about; the
# same servers with PATH (and HOME) are not. The runners whose package
# mcpform pins (npx, npm exec, pnpm dlx, bunx, uvx, pipx run) are not: the
# runner never runs, mcpform starts the pinned package itself.

server "npx" {
  command = ["npx", "-y", "@modelcontextprotocol/server-memory@2026.8.4"]
}

server "npx_ok" {
  command = ["npx", "-y", "@modelcontextprotocol/server-memory@2026.8.4"]
  env     = ["HOME", "PATH"]
}

server "uvx" {
  command = ["uvx", "mcp-server-time==2026.8.18"]
  env     = ["TZ", "PATH"]
}

server "windows" {
  command = ["cmd", "/c", "npx.cmd", "-y", "server-everything@2026.1.14"]
  env     = ["HOME"] # WARNING: Launcher without PATH
  # (through cmd /c, which mcpform does not pin through: the runner runs)
}

server "pnpm" {
  command = ["pnpm", "dlx", "server-everything@2026.1.14"]
}

server "pnpm_install" {
  # Not a launcher: pnpm's other subcommands are not checked.
  command = ["pnpm", "start"]
}

server "npm" {
  command = ["npm", "exec", "--yes", "server-everything@2026.1.14"]
}

server "bunx" {
  command = ["/usr/local/bin/bunx", "server-everything@2026.1.14"]
}

server "pipx" {
  command = ["pipx", "run", "mcp-server-fetch==2026.8.18"]
}

server "uv" {
  command = ["uv", "run", "server.py"] # WARNING: Launcher without PATH and HOME
}

server "binary" {
  command = ["github-mcp-server", "stdio"]
}
