server "time" {
  command = ["uvx", "mcp-server-time"]
  comand  = ["uvx"] # ERROR: Unsupported argument
  protocl = "auto"  # ERROR: Unsupported argument
}
