# "ask" offered, approvers = "owners" (the default), no owners: every
# question would be denied.
agent {
  permission_modes = ["plan", "ask"]
}
