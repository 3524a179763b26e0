variable "needed" { # ERROR: No value for required variable
  type = string
}

variable "port" {
  type    = number
  default = "not a number" # ERROR: Invalid default value for variable
}

variable "dir" {
  default = "notes" # ERROR: Invalid value for variable
  validation {
    condition     = startswith(var.dir, "/")
    error_message = "dir must be absolute."
  }
}

variable "other" {
  default = "x"
  validation {
    condition     = var.dir != "" # ERROR: Invalid reference in variable validation
    error_message = "nope"
  }
}

variable "source" { # ERROR: Invalid variable name
}
