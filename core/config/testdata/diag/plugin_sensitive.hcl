# Sensitive values must not show in any diagnostic.
plugin "tg" {
  source = "telegram"
  config {
    token          = ["hunter2-literal"]
    tokn           = "hunter2-typo"
    webhook_secret = { value = "hunter2-object" }
    poll_timeout   = "x"
  }
}
