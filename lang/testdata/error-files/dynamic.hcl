locals {
  tools = { fetch = "1.0.0", fetch_raw = "1.x" }
}

server "fetch" {
  command = ["uvx", "mcp-server-fetch"]
  dynamic "tool" {
    for_each = local.tools
    labels   = [tool.key]
    content {
      version = tool.value # ERROR: Invalid version
    }
  }
}
