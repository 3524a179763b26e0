server "time" {
  command = ["uvx", "mcp-server-time==2025.8.4"]
  env     = ["PATH", "HOME"]
}

locals {
  x = 1
}
