agnet {
  command = "claude"
}

acess {
  dm_policy = "open"
}

plugins "tg" {
  source = "telegram"
}
