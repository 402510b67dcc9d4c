plugin "tg" {
  source = "telegram"
  config {
    token = "x"
    nested {
      a = 1
    }
  }
  config {
    token = "y"
  }
}
