access {
  dm_policy    = "alowlist"
  group_policy = "closed"
  owners       = ["tg:1001", "tgg:1002"]
  allow_from   = ["1003", "tg:", "discord:42"]
  groups       = ["dc:-100200"]
  group_allow_from = ["wa:+1555"]
}

plugin "tg" {
  source  = "telegram"
  enabled = false
}

plugin "dc" {
  source  = "discord"
  enabled = false
}
