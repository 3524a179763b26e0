server "time" { # ERROR: Duplicate server "time"
  command = ["uvx", "mcp-server-time==2025.8.4"]
}

locals {
  x = 2 # ERROR: Duplicate local value definition
}
