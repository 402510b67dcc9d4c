agent {
  permission_modes = ["acceptEdits", "bypassPermissions"]
}
