# A deliberately unsafe configuration: every line below is a finding of
# `clawhost security audit` (core/audit_test.go).
data_dir = "./data"

agent {
  permission_mode  = "bypassPermissions"
  permission_modes = ["plan", "bypassPermissions"]
  allowed_tools    = ["Read", "Bash"]
  approvals        = "chat"
  approvers        = "sender"
  env              = { GITHUB_TOKEN = "ghp_written_in_the_file", ANTHROPIC_BASE_URL = "http://127.0.0.1:1" }
}

access {
  dm_policy    = "open"
  allow_from   = ["tg:*", "web:*"]
  group_policy = "open"
}

admin {
  listen   = "0.0.0.0:8791"
  tls_cert = "admin.crt"
  tls_key  = "admin.key"
}

storage {
  engine = "postgres"
  url    = "postgres://clawhost:hunter2-in-file@db.example:5432/clawhost?sslmode=require"
}

plugin "web" {
  source = "webchat"
  config {
    listen       = "0.0.0.0:8790"
    access_token = "webchat-token-in-file"
  }
}

plugin "tg" {
  source = "telegram"
  config {
    token          = "123456:AAH-token-in-file"
    webhook_listen = "127.0.0.1:8443"
    webhook_secret = "short"
  }
}

plugin "pinned" {
  source = "ping"
  sha256 = "0000000000000000000000000000000000000000000000000000000000000000"
}

# A named agent's own settings apply to its claude, and are audited as its
# own; what it inherits was reported for the default block.
agent "public" {
  workspace = "./public"
  sandbox   = "off"
  settings  = "user"
}
