agent {
  permission_mode = "bypassPermissions"
}
