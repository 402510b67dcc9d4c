package wire

import (
	"context"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
)

// SDKVersion is reported in Describe.
const SDKVersion = "0.1.0"

// PluginName is the single go-plugin name every clawhost plugin serves; the
// kinds are discovered through Describe.
const PluginName = "clawhost"

// Handshake is the go-plugin handshake. The magic cookie never changes; the
// protocol version is the proto package's major (clawhost.v1).
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  1,
	MagicCookieKey:   "CLAWHOST_PLUGIN",
	MagicCookieValue: "3f1c9a2e-clawhost-plugin-v1-b8d4e6f0",
}

// MaxMessageBytes is the gRPC message size limit on both sides.
const MaxMessageBytes = 16 << 20

// GRPCPlugin is the go-plugin glue. On the plugin side Srv is set; on the
// host side it is nil and GRPCClient returns the raw connection.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	Srv *Server
}

// GRPCServer implements plugin.GRPCPlugin.
func (p *GRPCPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	p.Srv.Register(s)
	return nil
}

// GRPCClient implements plugin.GRPCPlugin.
func (p *GRPCPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return c, nil
}
