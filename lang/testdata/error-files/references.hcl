variable "notes_dir" {
  default = "~/notes"
}

locals {
  server = "uvx"
}

server "time" {
  command = [
    local.sever,   # ERROR: Reference to undeclared local value
    var.notes_dri, # ERROR: Reference to undeclared input variable
    path.cwd,      # ERROR: Unsupported path attribute
    path.modul,    # ERROR: Unsupported path attribute
  ]
}

server "hcl_reports_these" {
  command = [
    nope,      # ERROR: Unknown variable
    uper("x"), # ERROR: Call to unknown function
  ]
}
