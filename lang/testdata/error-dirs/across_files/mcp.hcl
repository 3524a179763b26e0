server "time" {
  command = ["uvx", "mcp-server-time"]
  env     = ["PATH", "HOME"]
}

locals {
  x = 1
}
