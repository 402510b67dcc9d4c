package sdktest

import (
	"net"
	"testing"
)

// TestFreeAddr: the address refuses connections, and a server can then
// listen on it.
func TestFreeAddr(t *testing.T) {
	addr := FreeAddr(t)
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Fatalf("%s accepted a connection", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("cannot listen on %s: %v", addr, err)
	}
	ln.Close()
}
