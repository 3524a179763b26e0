server "warned" {
  command  = ["go", "run", "../servers/notes"]
  on_drift = "warn" # ERROR: Invalid on_drift
}

server "typo" {
  command  = ["go", "run", "../servers/notes"]
  on_drift = "block-change" # ERROR: Invalid on_drift
}

server "exposed" {
  command = ["go", "run", "../servers/notes"]
  expose {
    tools = [
      "search_*",
      "",         # ERROR: Invalid expose pattern
      "search_*", # ERROR: Invalid expose pattern
    ]
    templates = [] # ERROR: Unsupported argument
  }
  expose { # ERROR: Duplicate expose block
    prompts = []
  }
}
