plugin "tg" {
  source     = "telegram"
  enabled    = false
  debounce   = "soon"
  text_limit = 0
  queue_mode = "colect"

  reset {
    mode    = "weekly"
    at_hour = -1
  }
}

plugin "web" {
  source     = "webchat"
  debounce   = "0s"
  text_limit = 2000
  queue_mode = "interrupt"

  reset {
    mode         = "idle"
    idle_minutes = 30
  }
}
