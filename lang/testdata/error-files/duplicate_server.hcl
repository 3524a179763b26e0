server "time" {
  command = ["uvx", "mcp-server-time==2025.8.4"]
  env     = ["PATH", "HOME"]
}

server "time" { # ERROR: Duplicate server "time"
  command = ["uvx", "mcp-server-time==2025.8.4"]
}

server "a.b" { # ERROR: Invalid server name
  command = ["x"]
}
