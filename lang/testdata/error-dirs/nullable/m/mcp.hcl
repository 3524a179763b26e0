variable "strict" {
  nullable = false
}

variable "loose" {
  default = "x"
}

variable "dflt" {
  nullable = false
  default  = "from-default"
}

server "s" {
  command = ["x", var.dflt, var.loose == null ? "was-null" : var.loose]
}
