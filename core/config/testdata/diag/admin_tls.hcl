# Beyond loopback with a certificate and its key: valid.
admin {
  listen   = "192.168.1.5:8791"
  tls_cert = "admin.pem"
  tls_key  = "admin-key.pem"
}
