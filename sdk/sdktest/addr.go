package sdktest

import (
	"net"
	"testing"
)

// FreeAddr is a loopback address (127.0.0.1:port) nobody listens on right
// now: a server the test starts later may listen there, and until then a
// connection to it is refused (an API that is down).
func FreeAddr(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
