plugin "tg" {
  enabled = false
}

plugin "web" {
  # source forgotten
  path = "/opt/clawhost/web"
}
