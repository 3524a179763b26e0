module "gh" { # ERROR: Missing required argument
  source    = "./modules/gh"
  tokn_env  = "GITHUB_TOKEN" # ERROR: Unsupported argument
  port      = "eighty"       # ERROR: Invalid value for input variable
  count     = 2              # ERROR: Reserved argument name in module block
}

module "gh2" {
  source    = "./modules/gh"
  token_env = "GITHUB_TOKEN"
  port      = 8080
  mode      = "bad" # ERROR: Invalid value for variable
}
