plugin "tg" {
  source  = "telegram"
  enabled = false
}

plugin "discord" {
  source = "discord"
}

plugin "tg" {
  source  = "telegram"
  enabled = false
}

plugin "Bad Name" {
  source = "x"
}
