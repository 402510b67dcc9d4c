# approvers = "sender" while a group reaches the agent: a group member
# could approve their own tool use. Warned at the attribute.
agent {
  approvals        = "chat"
  permission_modes = ["plan", "ask"]
  approvers        = "sender"
}
access {
  groups = ["tg:-100"]
}
plugin "tg" {
  source = "telegram"
  config {
    token = env("TG_TOKEN")
  }
}
