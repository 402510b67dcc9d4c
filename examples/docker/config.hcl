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

# The status page and /healthz (the image's HEALTHCHECK runs clawhost
# healthcheck against it). Inside the container it listens on every address
# so that a published port reaches it, over HTTPS with a self-signed
# certificate made at the first start in /data (its SHA-256 fingerprint is in
# the log); every route but /healthz needs the token in /data/admin.token.
# Publish it on the host's loopback only:
#   docker run -p 127.0.0.1:8791:8791 ...
#   docker exec clawhost cat /data/admin.token   then open
#   https://127.0.0.1:8791/?token=<that token>   (accept the certificate)
admin {
  listen   = env("CLAWHOST_ADMIN_LISTEN", "0.0.0.0:8791")
  tls_cert = "/data/admin-tls.crt"
  tls_key  = "/data/admin-tls.key"
}

access {
  # With no owner, clawhost logs a one-time "/owner CODE" at its first start
  # (docker logs clawhost): send it to the bot to become its owner;
  # docker exec clawhost clawhost owner-code makes a new one.
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
