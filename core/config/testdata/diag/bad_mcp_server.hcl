agent {
  mcp_server "clawhost" {
    command = "true"
  }
  mcp_server "bad name" {
    command = "/no/such/mcp-server"
    env     = { "1X" = "y" }
  }
  mcp_server "git" {
    comand = "git-mcp"
  }
}

agent "ops" {
  workspace = "/srv/ops"
  mcp_server "fs" {
    command = ""
  }
  mcp_server "fs" {
    command = "true"
    env     = { TOKEN = env("TG_TOKEN") }
  }
}
