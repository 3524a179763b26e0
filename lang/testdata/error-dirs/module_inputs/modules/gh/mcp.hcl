variable "token_env" {
  type = string
}

variable "port" {
  type    = number
  default = 443
}

variable "mode" {
  default = "ro"
  validation {
    condition     = contains(["ro", "rw"], var.mode)
    error_message = "mode is ro or rw."
  }
}

server "issues" {
  command = ["github-mcp", "--port", tostring(var.port)]
  env     = [var.token_env]
}
