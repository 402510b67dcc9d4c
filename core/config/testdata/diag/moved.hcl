agent {
  claude_command = "/usr/local/bin/claude"
}

access {
  group "tg:-100" {
    allow_from   = ["tg:*"]
    mention_only = true
  }
}

messages {
  typing_indicator = true
}

plugin "tg" {
  source  = "telegram"
  enabled = false
}
