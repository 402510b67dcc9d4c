# What is the host's, not an agent's, is refused in an agent "<id>" block
# rather than silently not applied; the agent's own run_as, sandbox,
# settings and idle_timeout are accepted.
agent {
  max_concurrent = 2
}

agent "public" {
  workspace        = "./public"
  sandbox          = "off"
  idle_timeout     = "5m"
  max_concurrent   = 8
  one_shot         = true
  approvers        = "sender"
  approval_timeout = "1m"
}

plugin "tg" {
  source = "telegram"
  config {
    token = "x"
  }
}
