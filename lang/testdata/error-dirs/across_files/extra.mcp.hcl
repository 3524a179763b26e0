server "time" { # ERROR: Duplicate server "time"
  command = ["uvx", "mcp-server-time"]
}

locals {
  x = 2 # ERROR: Duplicate local value definition
}
