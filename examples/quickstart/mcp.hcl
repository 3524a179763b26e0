# The smallest useful mcp.hcl: one server, the notes server written with the
# official Go SDK (../servers/notes). Try:
#
#   go run ./cmd/mcpform -chdir=examples/quickstart validate
#   go run ./cmd/mcpform -chdir=examples/quickstart plan

mcpform {
  required_version = ">= 0.1.0"
}

server "notes" {
  # argv, run without a shell, from this directory.
  command = ["go", "run", "../servers/notes"]

  # The first `go run` compiles the server: give the probe time.
  timeout = "3m"

  # A server sees only the environment variables named here. `go run` needs
  # its home, path and caches; a name that is not set is simply not passed.
  env = ["HOME", "PATH", "GOPATH", "GOMODCACHE", "GOCACHE", "GOPROXY", "GOFLAGS"]
}
