package config

import (
	"net"
	"strconv"
)

// DefaultAdminListen is the default address of the admin endpoint.
const DefaultAdminListen = "127.0.0.1:8791"

// Admin is the admin {} block: the local HTTP endpoint for status, pairing
// approval and the web chat.
type Admin struct {
	// Listen is the host:port the endpoint listens on (listen). An empty
	// string disables it. Default "127.0.0.1:8791"; it has no
	// authentication, so keep it on loopback.
	Listen string `hcl:"listen,optional"`
	// Pprof serves Go's profiles under /debug/pprof/ on the endpoint
	// (pprof); off by default. They show where the host spends CPU and
	// memory (go tool pprof http://127.0.0.1:8791/debug/pprof/profile) and
	// cost nothing until fetched; they also show the command line and
	// stacks, so keep the endpoint on loopback.
	Pprof bool `hcl:"pprof,optional"`
}

func defaultAdmin() *Admin { return &Admin{Listen: DefaultAdminListen} }

func (a *Admin) check(k *checker) {
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
	}
}
