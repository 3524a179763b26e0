server "shell" {
  command = "uvx mcp-server-time" # ERROR: Incorrect attribute value type
}

server "empty" {
  command = [] # ERROR: Empty command
}

server "blank" {
  command = [
    "", # ERROR: Invalid command
    "x",
  ]
}

server "nested" {
  command = ["a", ["b"]] # ERROR: Incorrect attribute value type
}

server "missing" { # ERROR: Missing required argument
  env = ["TZ"]
}
