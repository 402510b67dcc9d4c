# The configuration of both hosts of compose.yaml: the same file, each host
# with its own host_id (CLAWHOST_HOST_ID) and data_dir (its own volume).
# README, "Several hosts on one database", says what they share and what
# stays on one host.

data_dir = "/data"

agent {
  command   = "claude"
  workspace = "/workspace"
  # claude's sandbox, bubblewrap, needs user namespaces the container runtime
  # usually denies; without it clawhost refuses to start while strangers can
  # pair. docker run -e CLAWHOST_SANDBOX=off accepts that the container is the
  # only boundary (docs/install.md).
  sandbox   = env("CLAWHOST_SANDBOX", "auto")
  # CLAUDE_CONFIG_DIR: claude's session files on the shared volume, so a
  # session that moves to the other host resumes there (--resume).
  env = env("ANTHROPIC_API_KEY", "") == "" ? { CLAUDE_CONFIG_DIR = "/claude" } : {
    CLAUDE_CONFIG_DIR = "/claude"
    ANTHROPIC_API_KEY = env("ANTHROPIC_API_KEY")
  }
}

access {
  dm_policy = "pairing"
}

# One PostgreSQL for both hosts, over its Unix socket (a volume shared with
# the db service): no password in this file and no TLS needed on the
# socket.
storage {
  engine  = "postgres"
  url     = "postgres:///clawhost?host=/var/run/postgresql&user=clawhost"
  host_id = env("CLAWHOST_HOST_ID")
}

# One host polls Telegram at a time (the other stands by and takes over
# when it dies).
plugin "tg" {
  source  = "telegram"
  enabled = env("TELEGRAM_BOT_TOKEN", "") != ""
  config {
    token = env("TELEGRAM_BOT_TOKEN", "")
  }
}
