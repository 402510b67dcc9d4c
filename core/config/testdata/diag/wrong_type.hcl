log_level = "info"

agent {
  max_warm  = "many"
  args      = "--verbose"
  one_shot  = "sometimes"
}

access {
  require_mention = 3
  owners          = "tg:1"
}
