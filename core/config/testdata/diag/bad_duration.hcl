agent {
  timeout      = "10 minutes"
  idle_timeout = "-5m"
}

plugin "tg" {
  source        = "telegram"
  enabled       = false
  start_timeout = "10"
}
