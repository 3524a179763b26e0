server "a" {
  command = ["x"]
  client_capabilities = { # WARNING: Unknown client capability
    elicitaton = {}
  }
}

server "b" {
  command             = ["x"]
  client_capabilities = { elicitation = true } # ERROR: Invalid client capability
}

server "c" {
  command             = ["x"]
  client_capabilities = ["roots"] # ERROR: Incorrect attribute value type
}
