mcpform {
  required_version = ">= 99.0.0" # ERROR: Unsupported mcpform version
}

# Reported alone: this would be an error too, but a configuration written
# for another mcpform is best reported by its version constraint.
server "x" {
  comand = []
}
