locals {
  a = "${var.x}"
  b = "${var.x}-suffix"
  c = "${var.x}${var.y}"
  d = "${format("%s", var.x)}"
  e = "${~var.x~}"
  f = "plain"
  g = ["${var.x}"]
}
server "s" {
  command = "${local.cmd}" # a comment stays
  sandbox {
    filesystem {
      write = "${local.paths}"
    }
  }
}
