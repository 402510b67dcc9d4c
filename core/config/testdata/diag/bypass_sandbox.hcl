# IS_SANDBOX=1 in agent.env: no warning.
agent {
  args = ["--verbose", "--dangerously-skip-permissions"]
  env  = { IS_SANDBOX = "1" }
}
