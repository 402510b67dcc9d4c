log_level  = "warning"
log_format = "yaml"

agent {
  permission_mode = "acceptedits"
  permission_modes = ["plan", "yolo"]
  max_concurrent  = 0
}

admin {
  listen = "localhost"
}
