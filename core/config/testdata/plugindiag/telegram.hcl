# Diagnostics a plugin's own checks return, placed in its config block.
plugin "tg" {
  source = "telegram"
  config {
    token        = "hunter2-not-a-token"
    api_endpoint = "ftp://example.org/bot%s/%s"
    allowed_chats = [
      "1001",
      "not-a-chat",
    ]
    poll_timeout = 5
  }
}

plugin "one" {
  source = "telegram"
  config { token = "hunter2-one-line" }
}
