# Defaults from env(), conditionals enabling plugins from the environment.
data_dir  = env("CLAWHOST_DATA", "/var/lib/clawhost")
log_level = env("CLAWHOST_LOG_LEVEL", "debug")

plugin "tg" {
  source  = "telegram"
  enabled = env("TG_TOKEN", "") != ""
  config {
    token = env("TG_TOKEN")
  }
}

plugin "tg_off" {
  source  = "telegram"
  enabled = env("NO_SUCH_TOKEN", "") != ""
  config {
    token = env("NO_SUCH_TOKEN")
  }
}

plugin "tg_empty" {
  source  = "telegram"
  enabled = env("EMPTY", "x") != ""
  config {
    token = "unused"
  }
}
