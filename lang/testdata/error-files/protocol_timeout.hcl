server "a" {
  command  = ["x"]
  protocol = "legcy" # ERROR: Invalid protocol
  timeout  = "30"    # ERROR: Invalid timeout
}

server "b" {
  command  = ["x"]
  protocol = "2025-11-25" # ERROR: Invalid protocol
  timeout  = "1h"         # ERROR: Invalid timeout
}
