variable "token" {
  type      = string
  default   = "ghp_do_not_print_me"
  sensitive = true
}

server "github" {
  command = ["github-mcp", "--token", var.token] # ERROR: Sensitive value in server configuration
  env     = ["GITHUB_TOKEN"]
}
