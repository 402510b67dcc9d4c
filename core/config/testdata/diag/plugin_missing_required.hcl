plugin "tg" {
  source = "telegram"
  config {
    poll_timeout = 10
  }
}

plugin "tg2" {
  source = "telegram"
}
