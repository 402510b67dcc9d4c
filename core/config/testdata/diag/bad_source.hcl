plugin "tg" {
  source  = "Telegram Bot"
  enabled = false
}
