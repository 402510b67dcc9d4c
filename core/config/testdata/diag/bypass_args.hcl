agent {
  args = ["--verbose", "--dangerously-skip-permissions"]
}
