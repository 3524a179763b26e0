# Team B uses the same module, read-only, and adds a server of its own.

mcpform {
  lockfile = "team-b.mcp.lock"
}

module "notes" {
  source       = "../modules/notes"
  allow_writes = false
}

server "time" {
  command = ["uvx", "mcp-server-time==2026.8.18"]
  env     = ["TZ", "PATH", "HOME"]
}
