# ExitPlanMode in allowed_tools: every plan would be carried out unread.
agent {
  permission_mode = "plan"
  allowed_tools   = ["Read", "ExitPlanMode"]
}
plugin "tg" {
  source = "telegram"
  config {
    token = env("TG_TOKEN")
  }
}
