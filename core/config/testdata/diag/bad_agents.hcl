agent {
  model = "sonnet"
  chats = ["tg:-1001"]
}

agent "Ops" {
  workspace = "./ops"
}

agent "main" {
  model = "opus"
}

agent "docs" {
  modle = "haiku"
  chats = ["tg:-1001", "tgg:5", "tg:-1002:7", "wa:15551234567@s.whatsapp.net", "wa:bob", "tg:*:3"]
}

agent "docs" {
  workspace = "./docs2"
}

agent "review" {
  worktrees = true
  max_warm = -1
  chats    = ["wa:+15551234567"]
}

plugin "tg" {
  source = "telegram"
  config {
    token = "x"
  }
}

plugin "wa" {
  source = "whatsapp"
}

schedule "nightly" {
  cron   = "0 3 * * *"
  chat   = "wa:15551234567@s.whatsapp.net"
  prompt = "report"
  agent  = "revew"
}
