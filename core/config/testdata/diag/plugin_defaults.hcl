plugin "tg" {
  source = "telegram"
  config {
    token         = "123:abc"
    allowed_chats = [1001, "-100200"]
  }
}
