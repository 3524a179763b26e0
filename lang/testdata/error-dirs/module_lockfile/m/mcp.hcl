mcpform {
  lockfile = "other.lock" # ERROR: Lockfile set in a module
}
