package config

import (
	"net"
	"strconv"
	"strings"
)

// DefaultAdminListen is the default address of the admin endpoint.
const DefaultAdminListen = "127.0.0.1:8791"

// Admin is the admin {} block: the local HTTP endpoint for status, pairing
// approval and the web chat.
type Admin struct {
	// Listen is the host:port the endpoint listens on (listen). An empty
	// string disables it. Default "127.0.0.1:8791". Every route but
	// /healthz needs the admin token, generated at the first start into
	// <data_dir>/admin.token (0600). An address beyond loopback (":8791",
	// "0.0.0.0:8791", a LAN address, a host name other than localhost) is
	// refused unless TLSCert and TLSKey are set: the token would cross the
	// network in clear.
	Listen string `hcl:"listen,optional"`
	// TLSCert and TLSKey are PEM files of a certificate and its key
	// (tls_cert, tls_key); when both are set the endpoint serves HTTPS,
	// which it needs to listen beyond loopback. A relative path is
	// resolved against the directory of the file. When neither file
	// exists, the host makes a self-signed pair there at its start (0600;
	// the log names its SHA-256 fingerprint) — a container's first start.
	TLSCert string `hcl:"tls_cert,optional"`
	TLSKey  string `hcl:"tls_key,optional"`
	// Pprof serves Go's profiles under /debug/pprof/ on the endpoint
	// (pprof); off by default. They show where the host spends CPU and
	// memory (go tool pprof http://127.0.0.1:8791/debug/pprof/profile) and
	// cost nothing until fetched; they also show the command line and
	// stacks, so keep the endpoint on loopback.
	Pprof bool `hcl:"pprof,optional"`
}

func defaultAdmin() *Admin { return &Admin{Listen: DefaultAdminListen} }

// IsLoopbackListen reports whether the host of a host:port address names
// the loopback interface: a loopback IP or "localhost". An empty host
// (":8791") means every interface; other names may resolve anywhere.
func IsLoopbackListen(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (a *Admin) check(k *checker) {
	if (a.TLSCert == "") != (a.TLSKey == "") {
		set, missing := "tls_cert", "tls_key"
		if a.TLSCert == "" {
			set, missing = missing, set
		}
		k.errorf(k.valueRange(set), "Incomplete TLS settings for the admin endpoint",
			"admin.%s is set but admin.%s is not; set both (PEM files), or neither.", set, missing)
	}
	if a.Listen == "" {
		return
	}
	_, port, err := net.SplitHostPort(a.Listen)
	if err == nil {
		var n int
		n, err = strconv.Atoi(port)
		if err == nil && (n < 0 || n > 65535) {
			err = strconv.ErrRange
		}
	}
	if err != nil {
		k.errorf(k.valueRange("listen"), "Invalid value for admin.listen",
			"%q is not a host:port address such as \"127.0.0.1:8791\" (an empty string disables the endpoint).", a.Listen)
		return
	}
	if !IsLoopbackListen(a.Listen) && (a.TLSCert == "" || a.TLSKey == "") {
		k.errorf(k.valueRange("listen"), "Admin endpoint beyond loopback without TLS",
			"%q is not a loopback address, and without TLS the admin token and the status (pairing codes, sessions) would cross the network in clear. Listen on %q, or set admin.tls_cert and admin.tls_key.", a.Listen, DefaultAdminListen)
	}
}
