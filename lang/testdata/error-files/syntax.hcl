server "time" {
  command = ["uvx" "mcp-server-time"] # ERROR: Missing item separator
}
