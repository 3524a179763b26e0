variable "memory" {
  type    = string
  default = "1 gigabyte"
}

locals {
  half = 2.5
}

server "files" {
  command = ["npx", "-y", "@modelcontextprotocol/server-filesystem@2026.8.31"]
  sandbox {
    limits {
      memory    = var.memory # ERROR: Invalid sandbox limit
      processes = local.half # ERROR: Invalid sandbox limit
      files     = "many"     # ERROR: Incorrect attribute value type
      file_size = "512XB"    # ERROR: Invalid sandbox limit
      proceses  = 8          # ERROR: Unsupported argument
    }
    limits { # ERROR: Duplicate limits block
      memory = "1GiB"
    }
  }
}

server "small" {
  command = ["srv"]
  sandbox {
    limits {
      memory    = "16MiB"  # ERROR: Invalid sandbox limit
      processes = 4        # ERROR: Invalid sandbox limit
      files     = -1       # ERROR: Invalid sandbox limit
      file_size = 1000     # ERROR: Invalid sandbox limit
    }
  }
}

server "odd" {
  command = ["srv"]
  sandbox {
    limits {
      memory    = 0             # ERROR: Invalid sandbox limit
      processes = 1e12          # ERROR: Invalid sandbox limit
      files     = ["4096"]      # ERROR: Incorrect attribute value type
      file_size = null          # ERROR: Incorrect attribute value type
    }
  }
}

server "huge" {
  command = ["srv"]
  sandbox {
    limits {
      memory    = "5000000TiB"       # ERROR: Invalid sandbox limit
      file_size = 99999999999999999999 # ERROR: Invalid sandbox limit
      files     = true             # ERROR: Incorrect attribute value type
    }
  }
}
