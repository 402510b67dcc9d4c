data_dir = "./data"

agent {
  command = "claude
}

plugin "tg" {
  source = "telegram"
