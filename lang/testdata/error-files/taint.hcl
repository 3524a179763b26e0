server "notes" {
  command = ["go", "run", "../servers/notes"]
  taint {
    sources = [
      "search_notes",
      "resources:*",
      "prompts:*",
      "tools:*",      # ERROR: Invalid taint source
      "",             # ERROR: Invalid taint source
      "search_notes", # ERROR: Invalid taint source
    ]
    sinks = [
      "add_note",
      "resources:*", # ERROR: Invalid taint sink
    ]
    labels = [] # ERROR: Unsupported argument
  }
}
