server "time" {
  command = ["uvx", "mcp-server-time==2025.8.4"]
  comand  = ["uvx"] # ERROR: Unsupported argument
  protocl = "auto"  # ERROR: Unsupported argument
}
