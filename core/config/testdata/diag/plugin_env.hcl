# The values of env attributes may be secrets: no diagnostic shows them,
# not even the source line around a problem.
agent {
  env = { ANTHROPIC_API_KEY = "hunter2-agent", BROKEN = ["hunter2-list"] }
}

plugin "a" {
  source = "other"
  env = {
    HTTPS_PROXY = "http://user:hunter2@proxy:3128"
    "1BAD"      = "hunter2-name"
    "A-B"       = "hunter2-dash"
  }
}

plugin "b" {
  source = "other"
  env    = { OK = env("TG2_TOKEN"), LIST = ["hunter2"] }
}

plugin "c" {
  source = "other"
  env    = { FROM_ENV = env("TG_TOKEN"), PLAIN = "x" }
}
