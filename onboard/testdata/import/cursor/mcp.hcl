# Imported by `mcpform import` from Cursor's configuration (.cursor/mcp.json).
# Review every command before `mcpform plan`: each runs as written, without a shell.

mcpform {
  required_version = ">= 0.1.0"
}

server "browser-tools" {
  # WARNING: npx package "@agentdeskai/browser-tools-mcp@latest" is not pinned: use "@agentdeskai/browser-tools-mcp@VERSION".
  # env passes PATH and HOME: npx needs PATH to find node (and the package's own commands) and HOME for npm's package cache; a server gets only the variables env lists.
  command = ["npx", "@agentdeskai/browser-tools-mcp@latest"]
  env     = ["PATH", "HOME"]
}

server "stripe" {
  # WARNING: npx package "@stripe/mcp" is not pinned: use "@stripe/mcp@VERSION".
  # WARNING: argument 4 looks like a credential: do not commit it.
  # env passes PATH and HOME: npx needs PATH to find node (and the package's own commands) and HOME for npm's package cache; a server gets only the variables env lists.
  command = ["npx", "-y", "@stripe/mcp", "--tools=all", "--api-key=sk_test_SECRETstripekey1234567890"]
  env     = ["PATH", "HOME"]
}

server "git" {
  # Disabled in the client.
  # WARNING: uvx package "mcp-server-git" is not pinned: use "mcp-server-git==VERSION".
  # WARNING: argument 3 ("../my-repo") is relative to the directory of mcp.hcl.
  # env passes PATH and HOME: uvx needs PATH to find python and HOME for uv's cache; a server gets only the variables env lists.
  command = ["uvx", "mcp-server-git", "--repository", "../my-repo"]
  env     = ["PATH", "HOME"]
}

server "_2fa_tool" {
  # Imported from "2fa tool" (renamed: a server name must be an identifier).
  # Set in the environment (the client file's values were not copied): TOTP_SEED.
  command = ["/usr/local/bin/totp-mcp"]
  env     = ["TOTP_SEED"]
}

server "remote-docs" {
  # WARNING: the client sent a credential in the url's user name and password, not copied: see auth { bearer_env }.
  url = "https://docs.example.com/mcp"
}
