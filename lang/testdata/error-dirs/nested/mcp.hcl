module "outer" {
  source = "./modules/outer"
}
