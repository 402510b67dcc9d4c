plugin "tg" {
  source = "telegram"
  config {
    token        = env("TG_TOKEN")
    api_endpont  = "http://127.0.0.1:8081/bot%s/%s"
    poll_timeout = "thirty"
    debug        = true
  }
}
