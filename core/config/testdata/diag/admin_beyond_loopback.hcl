# The admin endpoint beyond loopback needs TLS: the token would cross the
# network in clear.
admin {
  listen   = "0.0.0.0:8791"
  tls_cert = "admin.pem"
}
