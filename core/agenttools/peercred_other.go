//go:build !linux

package agenttools

import "net"

// peerUID cannot tell the peer here: the socket's mode and its directory's
// are the only guard.
func peerUID(net.Conn) (int, error) {
	return -1, errNoPeerCred
}
