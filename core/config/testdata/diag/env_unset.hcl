data_dir = env("CLAWHOST_DATA")

agent {
  env = {
    ANTHROPIC_BASE_URL = env("ANTHROPIC_BASE_URL")
    HOME               = env("CLAWHOST_HOME")
  }
}

plugin "tg" {
  source = "telegram"
  config {
    token = env("TG_MISSING_TOKEN")
  }
}
