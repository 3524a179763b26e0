server "everything" {
  command = ["npx", "-y", "@modelcontextprotocol/server-everything@2026.8.31"]

  sample "get-sum" {
    arguments = { a = 2, b = 3 }
  }
  sample "get-sum" { # ERROR: Duplicate sample block
    arguments = { a = 1, b = 1 }
  }
  sample "echo" {
    arguments = ["hi"] # ERROR: Incorrect attribute value type
  }
  sample "add" {
    allow_side_effects = "sometimes" # ERROR: Incorrect attribute value type
  }
  sample "" { # ERROR: Invalid tool name
  }
  sample "x" {
    argument = {} # ERROR: Unsupported argument
  }
}
