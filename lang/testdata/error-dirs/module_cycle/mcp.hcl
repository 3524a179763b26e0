module "self" {
  source = "./" # ERROR: Module cycle
}
