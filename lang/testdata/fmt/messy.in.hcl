mcpform{
required_version=">= 0.1.0"
}
variable "notes_dir" {
type = string
    default="~/notes"
  description   =   "Where notes live."
}
locals {
  a = 1
  longer_name = "x"
}
server "time" {
command = ["uvx","mcp-server-time==2026.8.18"]
      env=["TZ"]
  sandbox {
  filesystem {
  read = [var.notes_dir]
  write = ["${path.tmp}/work"]
  }
  }
}



