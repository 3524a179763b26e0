module "abs" {
  source = "/etc/modules/x" # ERROR: Invalid module source
}

module "bare" {
  source = "modules/x" # ERROR: Invalid module source
}

module "noref" {
  source = "git::https://github.com/acme/mods.git//x" # ERROR: Invalid module source
}

module "http" {
  source = "git::http://github.com/acme/mods.git?ref=v1" # ERROR: Invalid module source
}

module "notfetched" {
  source = "git::https://github.com/acme/mods.git//x?ref=v1.0.0" # ERROR: Module not installed
}

module "computed" {
  source = "./${var.x}" # ERROR: Variables not allowed
}

module "missing" {
  source = "./does-not-exist" # ERROR: Cannot read configuration directory
}
