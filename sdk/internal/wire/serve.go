package wire

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"runtime"
	"strconv"
	"sync"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
)

// The plugin side of go-plugin's gRPC protocol, served here rather than by
// go-plugin's plugin.Serve. The host is go-plugin's client (sdk/pluginclient), and
// this is the same protocol go-plugin documents for plugins written in
// other languages (examples/python-echo speaks it too): the magic cookie,
// a Unix socket, one handshake line on stdout, and on the socket gRPC with
// clawhost's services, the health service and go-plugin's controller
// (proto/PROTOCOL.md, "Services"). go-plugin's broker and stdio services
// are left out: its client opens both at connect and takes UNIMPLEMENTED
// quietly, and a clawhost plugin's stderr is read by the host directly.
//
// Why not plugin.Serve: it can also serve net/rpc, and net/rpc's method
// registration reads methods through reflection, which makes the linker
// keep every exported method of every type a binary converts to an
// interface; go-plugin also links yamux, encoding/gob and gRPC reflection.
// On plugin.Serve the ping example was 12.9 MB, here 7.7 MB (both built
// with -tags grpcnotrace), and a static binary's mapped pages are most of a
// plugin's resident memory (telegram idle: 15.9 → 12.7 MB RSS). Plugin
// binaries do not import go-plugin at all;
// TestPluginsKeepDeadCodeElimination (core/archtest) keeps it so.
//
// Not served: go-plugin's gRPC reflection service (for grpcurl; it links
// the protobuf descriptor machinery) and automatic mTLS (the host does not
// ask for it; a plugin started with PLUGIN_CLIENT_CERT refuses, saying so).

// Environment variables of go-plugin's protocol the plugin side reads.
const (
	envClientCert  = "PLUGIN_CLIENT_CERT"
	envSocketDir   = "PLUGIN_UNIX_SOCKET_DIR"
	envSocketGroup = "PLUGIN_UNIX_SOCKET_GROUP"
)

// coreProtocolVersion is go-plugin's own protocol version, the first field
// of the handshake line.
const coreProtocolVersion = 1

// healthService is the service name go-plugin's client pings.
const healthService = "plugin"

// Serving is a plugin's gRPC server on its socket.
type Serving struct {
	srv  *grpc.Server
	lis  net.Listener
	once sync.Once
	done chan struct{}
}

// Addr is the socket the server listens on.
func (s *Serving) Addr() net.Addr { return s.lis.Addr() }

// Done is closed once the server has stopped: the host asked it to
// (go-plugin's controller Shutdown, sent when the host stops the plugin)
// or Stop was called.
func (s *Serving) Done() <-chan struct{} { return s.done }

// Stop stops the server and closes its connections; it returns once the
// server has stopped. Calling it again does nothing.
func (s *Serving) Stop() {
	s.once.Do(func() {
		s.srv.Stop()
		_ = s.lis.Close() // removes the socket file
		close(s.done)
	})
}

// HandshakeLine is the line the plugin prints on stdout for go-plugin's
// client: core protocol version, app protocol version, network, address,
// protocol, and the (here empty) server certificate.
//
// The app protocol version needs no negotiation: a clawhost plugin speaks
// one version, which go-plugin's plugin.Serve would also announce whatever
// PLUGIN_PROTOCOL_VERSIONS lists, leaving a mismatch for the client to
// report.
func (s *Serving) HandshakeLine() string {
	return fmt.Sprintf("%d|%d|%s|%s|grpc|", coreProtocolVersion, ProtocolVersion, s.Addr().Network(), s.Addr().String())
}

// Serve starts srv's gRPC server on a new socket and returns once it
// accepts connections. log receives the server's own errors.
func Serve(srv *Server, log hclog.Logger) (*Serving, error) {
	if os.Getenv(envClientCert) != "" {
		return nil, errors.New("the host asked for go-plugin's automatic mTLS (" + envClientCert + "), which clawhost plugins do not support; a clawhost host never asks for it")
	}
	lis, err := listen()
	if err != nil {
		return nil, fmt.Errorf("plugin socket: %w", err)
	}
	s := &Serving{lis: lis, done: make(chan struct{})}
	unary := []grpc.UnaryServerInterceptor{RecoverUnary(log)}
	stream := []grpc.StreamServerInterceptor{RecoverStream(log)}
	if srv.Secret != "" {
		// First in the chain: nothing runs for a caller without it.
		unary = append([]grpc.UnaryServerInterceptor{AuthUnary(srv.Secret)}, unary...)
		stream = append([]grpc.StreamServerInterceptor{AuthStream(srv.Secret)}, stream...)
	}
	s.srv = grpc.NewServer(
		grpc.MaxRecvMsgSize(MaxMessageBytes),
		grpc.MaxSendMsgSize(MaxMessageBytes),
		grpc.InitialWindowSize(WindowBytes), grpc.InitialConnWindowSize(WindowBytes),
		grpc.ChainUnaryInterceptor(unary...),
		grpc.ChainStreamInterceptor(stream...),
		// A call to a service not served here (go-plugin's broker and
		// stdio) goes through the stream interceptors too, so a stranger
		// learns nothing from it, not even which services are absent.
		grpc.UnknownServiceHandler(unknownService))
	hs := health.NewServer()
	hs.SetServingStatus(healthService, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(s.srv, hs)
	s.srv.RegisterService(&controllerDesc, controller{s})
	srv.Register(s.srv)
	go func() {
		if err := s.srv.Serve(lis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			log.Error("plugin server stopped", "error", err)
		}
		// Serve returns once the listener is closed; Stop ends the rest.
		s.Stop()
	}()
	return s, nil
}

// listen opens the Unix socket go-plugin's plugin.Serve would: a fresh
// name in PLUGIN_UNIX_SOCKET_DIR (default the temp dir), group-writable for
// PLUGIN_UNIX_SOCKET_GROUP when the host sets it. The socket file is
// removed when the listener closes. On Windows, a loopback TCP port.
func listen() (net.Listener, error) {
	if runtime.GOOS == "windows" {
		return net.Listen("tcp", "127.0.0.1:0")
	}
	f, err := os.CreateTemp(os.Getenv(envSocketDir), "plugin")
	if err != nil {
		return nil, err
	}
	path := f.Name()
	_ = f.Close()
	if err := os.Remove(path); err != nil {
		return nil, err
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if g := os.Getenv(envSocketGroup); g != "" {
		if err := groupWritable(path, g); err != nil {
			_ = l.Close()
			return nil, fmt.Errorf("%s=%q: %w", envSocketGroup, g, err)
		}
	}
	return l, nil // a *net.UnixListener unlinks its socket file on Close
}

// groupWritable gives the socket at path to group (a name or a gid), mode
// 0660.
func groupWritable(path, group string) error {
	gid, err := strconv.Atoi(group)
	if err != nil {
		g, err := user.LookupGroup(group)
		if err != nil {
			return err
		}
		if gid, err = strconv.Atoi(g.Gid); err != nil {
			return err
		}
	}
	if err := os.Chown(path, -1, gid); err != nil {
		return err
	}
	return os.Chmod(path, 0o660)
}

// controller is plugin.GRPCController: Shutdown, which go-plugin's client
// sends when the host stops the plugin (in debug mode and sdktest the only
// stop; a started plugin also gets SIGTERM). Declared by hand: its messages
// are empty, and go-plugin's generated code is in an internal package; the
// names are the wire contract (go-plugin's internal/plugin/grpc_controller.proto).
type controller struct{ s *Serving }

var controllerDesc = grpc.ServiceDesc{
	ServiceName: "plugin.GRPCController",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{
		MethodName: "Shutdown",
		Handler: func(impl any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
			in := new(emptypb.Empty)
			if err := dec(in); err != nil {
				return nil, err
			}
			shutdown := func(context.Context, any) (any, error) {
				// Answer first: Stop closes this call's connection too.
				go impl.(controller).s.Stop()
				return new(emptypb.Empty), nil
			}
			// Through the server's interceptors, as generated handlers do:
			// a handler that skips them skips the authentication.
			if interceptor == nil {
				return shutdown(ctx, in)
			}
			return interceptor(ctx, in, &grpc.UnaryServerInfo{Server: impl, FullMethod: shutdownMethod}, shutdown)
		},
	}},
	Metadata: "plugin/grpc_controller.proto",
}

// shutdownMethod is the full name of the controller's Shutdown.
const shutdownMethod = "/plugin.GRPCController/Shutdown"

// unknownService answers a call to a service the server does not serve
// (after the stream interceptors), as gRPC does without the handler.
func unknownService(_ any, stream grpc.ServerStream) error {
	method, _ := grpc.MethodFromServerStream(stream)
	return status.Errorf(codes.Unimplemented, "unknown method %s", method)
}
