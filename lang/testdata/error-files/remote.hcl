server "neither" { # ERROR: Missing required argument
  timeout = "30s"
}

server "both" {
  command = ["uvx", "mcp-server-time==2026.8.18"]
  url     = "https://mcp.example.com/mcp" # ERROR: Conflicting arguments command and url
}

server "local" {
  command = ["uvx", "mcp-server-time==2026.8.18"]
  headers = { "X-Org" = "acme" } # ERROR: Unsupported argument for a local server
  auth {                         # ERROR: Unsupported block for a local server
    bearer_env = "TOKEN"
  }
}

server "remote" {
  url                   = "https://mcp.example.com/mcp"
  env                   = ["GITHUB_TOKEN"] # ERROR: Unsupported argument for a remote server
  allow_install_scripts = true             # ERROR: Unsupported argument for a remote server
  sandbox {              # ERROR: Unsupported block for a remote server
    network {
      allow = []
    }
  }
}

server "http" {
  url = "http://mcp.example.com/mcp" # ERROR: Invalid url
}

server "userinfo" {
  url = "https://me:hunter2@mcp.example.com/mcp" # ERROR: Invalid url
}

server "fragment" {
  url = "https://mcp.example.com/mcp#top" # ERROR: Invalid url
}

server "scheme" {
  url = "wss://mcp.example.com/mcp" # ERROR: Invalid url
}

server "relative" {
  url = "/mcp" # ERROR: Invalid url
}

server "no_host" {
  url = "https:///mcp" # ERROR: Invalid url
}

server "port" {
  url = "https://mcp.example.com:0/mcp" # ERROR: Invalid url
}

server "headers" {
  url = "https://mcp.example.com/mcp"
  headers = {
    "X-Org"          = "acme"
    "Bad Name"       = "x"                                        # ERROR: Invalid header name
    Accept           = "text/plain"                               # ERROR: Reserved header
    "mcp-session-id" = "abc"                                      # ERROR: Reserved header
    Authorization    = "x"                                        # ERROR: Credential in headers
    Cookie           = "a=b"                                      # ERROR: Credential in headers
    X-Api-Key        = "x"                                        # ERROR: Credential in headers
    X-Access-Token   = "x"                                        # ERROR: Credential in headers
    X-Forwarded      = "Bearer abc"                               # ERROR: Credential in headers
    X-Opaque         = "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA=="         # ERROR: Credential in headers
    X-Github         = "ghp_16C7e42F292c6912E7710c838347Ae178B4a" # ERROR: Credential in headers
    X-Line           = "a\r\nX-Injected: 1"                       # ERROR: Invalid header value
    x-org            = "again"                                    # ERROR: Duplicate header
    X-Media          = "application/vnd.github.v3+json"
    X-Region         = "europe-west-international"
  }
}

server "headers_type" {
  url     = "https://mcp.example.com/mcp"
  headers = ["X-Org: acme"] # ERROR: Incorrect attribute value type
}

server "auth_both" {
  url = "https://mcp.example.com/mcp"
  auth {
    oauth      = true
    bearer_env = "GITHUB_TOKEN" # ERROR: Conflicting authentication methods
  }
}

server "auth_none" {
  url = "https://mcp.example.com/mcp"
  auth { # ERROR: Missing authentication method
  }
}

server "auth_false" {
  url = "https://mcp.example.com/mcp"
  auth {
    oauth = false # ERROR: Missing authentication method
  }
}

server "auth_scopes" {
  url = "https://mcp.example.com/mcp"
  auth {
    bearer_env = "GITHUB_TOKEN"
    scopes     = ["repo"] # ERROR: Scopes without OAuth
  }
}

server "auth_bad_scope" {
  url = "https://mcp.example.com/mcp"
  auth {
    oauth = true
    scopes = [
      "repo:read",
      "repo write", # ERROR: Invalid OAuth scope
      "say\"hi\"",  # ERROR: Invalid OAuth scope
      "repo:read",  # ERROR: Invalid OAuth scope
    ]
  }
}

server "auth_env" {
  url = "https://mcp.example.com/mcp"
  auth {
    bearer_env = "GITHUB-TOKEN" # ERROR: Invalid environment variable name
  }
}

server "auth_env_value" {
  url = "https://mcp.example.com/mcp"
  auth {
    bearer_env = "GITHUB_TOKEN=ghp_x" # ERROR: Invalid environment variable name
  }
}

server "auth_token" {
  url = "https://mcp.example.com/mcp"
  auth {
    bearer_env = "ghp_16C7e42F292c6912E7710c838347Ae178B4a" # ERROR: Invalid environment variable name
  }
}

server "auth_oauth_type" {
  url = "https://mcp.example.com/mcp"
  auth {
    oauth = "yes" # ERROR: Incorrect attribute value type
  }
}

server "auth_twice" {
  url = "https://mcp.example.com/mcp"
  auth {
    oauth = true
  }
  auth { # ERROR: Duplicate auth block
    oauth = true
  }
}

server "auth_unknown" {
  url = "https://mcp.example.com/mcp"
  auth {
    oauth = true
    scope = ["repo"] # ERROR: Unsupported argument
  }
}
