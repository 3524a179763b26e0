server "time" {
  command = ["uvx", "mcp-server-time"]
  env     = ["PATH", "HOME"]
}

server "time" { # ERROR: Duplicate server "time"
  command = ["uvx", "mcp-server-time"]
}

server "a.b" { # ERROR: Invalid server name
  command = ["x"]
}
