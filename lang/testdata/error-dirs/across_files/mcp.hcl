server "time" {
  command = ["uvx", "mcp-server-time"]
}

locals {
  x = 1
}
