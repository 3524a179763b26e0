module "inner" {
  source = "./inner"
  dir    = "relative" # the error is reported where the value is used
}
