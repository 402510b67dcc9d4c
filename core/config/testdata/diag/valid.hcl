data_dir   = "./data"
plugin_dir = "./bin"
log_level  = "debug"
log_format = "json"

agent {
  command         = "claude"
  args            = ["--verbose"]
  env             = { ANTHROPIC_BASE_URL = "http://127.0.0.1:9999" }
  workspace       = "./workspace"
  model           = "sonnet"
  fallback_model  = "haiku"
  permission_mode = "dontAsk"
  allowed_tools   = ["Read", "Bash(git log:*)"]
  timeout         = "5m"
  max_turns       = 20
  idle_timeout    = "1h"
  max_warm        = 2
  max_concurrent  = 3
  one_shot        = false
}

access {
  owners          = ["tg:1001"]
  dm_policy       = "allowlist"
  allow_from      = ["tg:1002", "tg2:7"]
  group_policy    = "open"
  groups          = ["tg:-100200"]
  require_mention = false
  trigger_words   = ["claude"]
}

admin {
  listen = ""
}

plugin "tg" {
  source = "telegram"
  config {
    token = env("TG_TOKEN")
  }
}

plugin "tg2" {
  source = "telegram"
  config {
    token        = env("TG2_TOKEN")
    poll_timeout = 5
  }
}
