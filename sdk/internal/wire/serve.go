package wire

import (
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
)

// ServeConfig is the go-plugin ServeConfig that serves srv: the handshake,
// the single plugin, message size limits and panic recovery. The sdk's
// Serve, its debug mode and sdktest all serve through it.
func ServeConfig(srv *Server, log hclog.Logger) *plugin.ServeConfig {
	return &plugin.ServeConfig{
		HandshakeConfig: Handshake,
		Plugins:         plugin.PluginSet{PluginName: &GRPCPlugin{Srv: srv}},
		Logger:          log,
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			opts = append(opts,
				grpc.MaxRecvMsgSize(MaxMessageBytes),
				grpc.MaxSendMsgSize(MaxMessageBytes),
				grpc.ChainUnaryInterceptor(RecoverUnary(log)),
				grpc.ChainStreamInterceptor(RecoverStream(log)))
			return grpc.NewServer(opts...)
		},
	}
}
