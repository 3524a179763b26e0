variable "dir" {}

server "files" {
  command = ["x"]
  sandbox {
    filesystem {
      read = [var.dir] # ERROR: Invalid sandbox path
    }
  }
}
