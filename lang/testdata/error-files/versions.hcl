server "time" {
  command = ["uvx", "mcp-server-time==2025.8.4"]
  version = "1.4" # ERROR: Invalid version

  tool "get_current_time" {
    version = "v1.0.0" # ERROR: Invalid version
  }
  tool "get_current_time" { # ERROR: Duplicate tool block
    version = "1.0.0"
  }
  tool "convert_time" { # ERROR: Missing required argument
  }
}
