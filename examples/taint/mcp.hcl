# Taint: once a source's result (text an attacker may control) has reached
# the client, every later call of a sink in the same client session needs
# the user's approval. Here search_notes returns notes anyone could have
# written, and add_note writes: a prompt injected into a note cannot make the
# agent write more notes without the user seeing it.

server "notes" {
  command = ["go", "run", "../servers/notes"]

  # The probe and the proxy declare elicitation, so approvals can be asked
  # through the client.
  client_capabilities = {
    elicitation = {}
  }

  taint {
    sources = ["search_notes", "resources:*"]
    sinks   = ["add_note"]
  }

  # Declared surface versions: plan fails when the server changes a tool's
  # contract without bumping these (GATE-VERSION-UNDERBUMP: mcpform explain).
  version = "1.0.0"

  tool "add_note" {
    version = "1.0.0"
  }

  tool "search_notes" {
    version = "1.0.0"
  }
}
