server "files" {
  command = ["srv"]
  sandbox {
    filesystem {
      read = ["/srv"]
    }
    limits {
      memory    = "1GiB" # a size string
      processes = 256
      files     = 4096
      file_size = var.max_file
    }
  }
}
