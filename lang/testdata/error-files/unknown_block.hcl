servr "time" { # ERROR: Unsupported block type
  command = ["uvx"]
}

server "notes" {
  command = ["go", "run", "../servers/notes"]
  sandbx { # ERROR: Unsupported block type
  }
}
