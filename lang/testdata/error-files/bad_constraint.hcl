mcpform {
  required_version = "newer please" # ERROR: Invalid version constraint
  lockfile         = var.x          # ERROR: Variables not allowed
}
