server "fetch" {
  command = ["uvx", "mcp-server-fetch"]
  sandbox {
    network {
      allow = [
        "api.github.com:443",
        "*.githubusercontent.com:443",
        "10.0.0.1:8080",
        "[2001:db8::1]:443",
        "example.com",        # ERROR: Invalid network allow entry
        "example.com:0",      # ERROR: Invalid network allow entry
        "example.com:65536",  # ERROR: Invalid network allow entry
        "api.*.com:443",      # ERROR: Invalid network allow entry
        "2001:db8::1:443",    # ERROR: Invalid network allow entry
        "999.1.1.1:80",       # ERROR: Invalid network allow entry
        "bad_host!:80",       # ERROR: Invalid network allow entry
      ]
    }
    network { # ERROR: Duplicate network block
      allow = []
    }
  }
}
