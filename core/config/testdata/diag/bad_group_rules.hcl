access {
  owners  = ["tg:1"]
  members = ["tg:2"]
  group "tg:-100" {
    allow_from      = ["tg:3"]
    members         = ["tgg:4"]
    require_mention = false
  }
  group "xx:-5" {}
}
plugin "tg" {
  source = "telegram"
  enabled = false
}
