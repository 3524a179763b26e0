server "files" {
  command = ["npx", "-y", "@modelcontextprotocol/server-filesystem@2026.8.31"]
  sandbox {
    filesystem {
      read = [
        "/srv/data",
        "~/notes",
        "relative/dir",  # ERROR: Invalid sandbox path
        "/srv/../etc",   # ERROR: Invalid sandbox path
        "~",             # ERROR: Invalid sandbox path
        "${path.tmp}",
        "$${HOME}/x",    # ERROR: Invalid sandbox path
        "/a//b",         # ERROR: Invalid sandbox path
      ]
      write = "/tmp" # ERROR: Incorrect attribute value type
    }
  }
}
