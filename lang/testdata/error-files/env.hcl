server "time" {
  command = ["uvx", "mcp-server-time==2025.8.4"]
  env = [
    "TZ",
    "TZ=UTC",   # ERROR: Invalid environment variable name
    "1ABC",     # ERROR: Invalid environment variable name
    "HAS-DASH", # ERROR: Invalid environment variable name
    "TZ",       # ERROR: Duplicate environment variable name
  ]
}
