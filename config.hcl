# clawhost — default configuration. Every setting is documented here; run
# `bin/clawhost validate -config config.hcl` after editing, and send SIGHUP to
# a running clawhost to reload it.
#
# Relative paths are relative to this file's directory.

data_dir   = "./data"   # database, plugin state (0700)
plugin_dir = "./bin"    # plugin "x" { source = "y" } runs <plugin_dir>/clawhost-y
log_level  = "info"     # trace | debug | info | warn | error
log_format = "text"     # text | json

agent {
  command   = "claude"       # the Claude Code CLI (npm install -g @anthropic-ai/claude-code)
  workspace = "./workspace"  # cwd of every claude run
  timeout   = "10m"          # per turn
  # args            = []      # extra CLI flags
  # env             = { ANTHROPIC_BASE_URL = "..." }
  # model           = "sonnet"
  # permission_mode = "default"   # acceptEdits | auto | bypassPermissions | manual | dontAsk | plan | default
  # idle_timeout    = "30m"  # warm claude processes stop after this
  # max_warm        = 4
  # max_concurrent  = 4
}

access {
  # Who may reach the agent. "pairing" (default): unknown direct senders are
  # refused until an owner approves them; "allowlist": only allow_from;
  # "open": everyone.
  dm_policy = "pairing"
  # Entries are "<plugin instance>:<sender id>"; "<instance>:*" admits every
  # sender of that instance. The web chat below listens on loopback only, so
  # whoever can open it is on this machine.
  allow_from = ["web:*"]
  owners     = []
}

admin {
  listen = "127.0.0.1:8791"  # status page, /healthz, /metrics; "" disables
}

# The local web chat: open http://127.0.0.1:8790 after `make run`.
plugin "web" {
  source = "webchat"
  config {
    listen = "127.0.0.1:8790"
  }
}

# Telegram, enabled when TELEGRAM_BOT_TOKEN is set.
plugin "tg" {
  source  = "telegram"
  enabled = env("TELEGRAM_BOT_TOKEN", "") != ""
  config {
    token = env("TELEGRAM_BOT_TOKEN", "")
  }
}

# /ping, answered without the agent.
plugin "ping" {
  source = "ping"
}

# Prepends the current date and time to every agent turn.
plugin "clock" {
  source = "clock-hook"
}
