locals {
  a = "${local.b}-a" # ERROR: Cycle in local values
  b = "${local.c}-b"
  c = local.a
  d = "fine"
}

server "uses_cycle" {
  command = ["x", local.a]
}

server "fine" {
  command = ["x", local.d]
}
