# clawhost's configuration in the container image (see the Dockerfile and
# docs/install.md). Every setting is explained in the annotated config.hcl
# of a release (/usr/share/doc/clawhost is the rest of it). Mount your own
# file over /etc/clawhost/config.hcl to change it.
#
# The database and the plugins' state live in /data, the agent works in
# /workspace: both are volumes.

data_dir = "/data"

agent {
  # The claude CLI the image installed (npm, /usr/local/bin/claude).
  command   = "claude"
  workspace = "/workspace"
  # claude's sandbox, bubblewrap, needs user namespaces the container runtime
  # usually denies; without it clawhost refuses to start while strangers can
  # pair. docker run -e CLAWHOST_SANDBOX=off accepts that the container is the
  # only boundary (docs/install.md).
  sandbox   = env("CLAWHOST_SANDBOX", "auto")
  # An API key from the container's environment (docker run -e
  # ANTHROPIC_API_KEY=...). Without one, log claude in once:
  #   docker exec -it clawhost env CLAUDE_CONFIG_DIR=/data/claude claude   then /login
  env = env("ANTHROPIC_API_KEY", "") == "" ? {} : { ANTHROPIC_API_KEY = env("ANTHROPIC_API_KEY") }
}

access {
  # Unknown senders get a pairing code; approve it with
  #   docker exec clawhost clawhost pairing approve CODE
  dm_policy = "pairing"
}

# Telegram, enabled when TELEGRAM_BOT_TOKEN is set (docker run -e
# TELEGRAM_BOT_TOKEN=...): it only calls out, no port to publish.
plugin "tg" {
  source  = "telegram"
  enabled = env("TELEGRAM_BOT_TOKEN", "") != ""
  config {
    token = env("TELEGRAM_BOT_TOKEN", "")
  }
}

# Discord, enabled when DISCORD_BOT_TOKEN is set.
plugin "dc" {
  source  = "discord"
  enabled = env("DISCORD_BOT_TOKEN", "") != ""
  config {
    token = env("DISCORD_BOT_TOKEN", "")
  }
}
