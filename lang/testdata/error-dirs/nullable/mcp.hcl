module "strict" {
  source = "./m"
  strict = null # ERROR: Invalid value for input variable
  loose  = null
  dflt   = null
}
