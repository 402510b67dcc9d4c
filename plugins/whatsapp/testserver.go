package whatsapp

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"time"

	"go.mau.fi/whatsmeow"
)

// Connecting to a fake WhatsApp server, for tests only.
//
// whatsmeow dials the fixed URL wss://web.whatsapp.com/ws/chat and trusts
// the certificate chain only when it is signed by WhatsApp's root key
// (whatsmeow.WACertPubKey). With server_address and server_root_key set
// (Validate refuses any address that is not loopback, so a production
// configuration cannot reach this by accident), every connection of the
// client — the websocket before and after login, media uploads and
// downloads — goes to server_address over TLS without verifying the TLS
// certificate (the Noise handshake inside is still verified, against the
// test root key), keeping the path /ws/chat.

// useTestServer points cli at the fake server at addr.
func useTestServer(cli *whatsmeow.Client, addr string) {
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, addr)
		},
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: true}, // a loopback test server; see above
		TLSHandshakeTimeout: 10 * time.Second,
	}
	h := &http.Client{Transport: tr}
	cli.SetWebsocketHTTPClient(h)
	cli.SetPreLoginHTTPClient(h)
	guardMedia(cli, tr)
}

// trustTestRoot makes whatsmeow trust key instead of WhatsApp's root key
// in this process. The plugin process serves one instance, so the global
// is its own.
func trustTestRoot(key [32]byte) {
	whatsmeow.WACertPubKey = key
}
