package pluginclient

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	grpcstatus "google.golang.org/grpc/status"

	pb "github.com/clawhost/clawhost/proto/gen/clawhost/v1"
	"github.com/clawhost/clawhost/sdk/channel"
)

// TestMapErrNotSent: only a call gRPC failed before it could connect is
// marked ErrNotSent; a connection that broke during the call is not.
func TestMapErrNotSent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		msg     string
		notSent bool
	}{
		{`connection error: desc = "transport: error while dialing: dial unix /tmp/plugin-dir1/plugin2: connect: connection refused"`, true},
		{`connection error: desc = "error reading server preface: read unix @->/tmp/plugin: read: connection reset by peer"`, true},
		{`connection error: desc = "transport: Error while dialing: dial tcp 127.0.0.1:43937: connect: connection reset by peer"`, true},
		{`connection error: desc = "transport: failed to write client preface: write unix @->/tmp/plugin: write: broken pipe"`, true},
		{"error reading from server: EOF", false},
		{"error reading from server: read unix @->/tmp/plugin: read: connection reset by peer", false},
	} {
		err := mapErr("send", grpcstatus.Error(codes.Unavailable, tc.msg))
		if !errors.Is(err, ErrPluginExited) || errors.Is(err, ErrNotSent) != tc.notSent {
			t.Errorf("%q → %v (not sent: %v, want %v)", tc.msg, err, errors.Is(err, ErrNotSent), tc.notSent)
		}
	}
}

// TestSendToADyingPluginIsNotSent: a plugin process that accepts the
// connection and dies before the HTTP/2 prefaces are exchanged (a kill -9
// just after the host dialled it) fails the send before gRPC queued it,
// so the send is ErrNotSent and may be repeated once the plugin is back.
// gRPC's message for it varies (a bare "write: connection reset by peer"
// among them), so this runs many connections. `make chaos` found the
// notice that a reply part may be missing sent twice into such a
// connection and dropped as "maybe delivered". With the call stream in
// use the same holds: no stream can be opened on a connection reset
// before its preface, the call goes unary and fails as it did, not sent.
func TestSendToADyingPluginIsNotSent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		stream bool // the call stream in use (calls.use(true))
		tries  int
	}{{"unary", false, 50}, {"call-stream", true, 20}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ln := listen(t)
			acceptEach(ln, func(c net.Conn) {
				if tcp, ok := c.(*net.TCPConn); ok {
					_ = tcp.SetLinger(0) // close with a reset, as a killed process does
				}
				_ = c.Close()
			})
			for range tc.tries {
				p := dial(t, ln.Addr().String())
				if tc.stream {
					p.calls.use(true)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				_, err := p.Send(ctx, channel.SendRequest{ChatID: "1", Text: "hi"})
				cancel()
				if !errors.Is(err, ErrPluginExited) || !errors.Is(err, ErrNotSent) {
					t.Fatalf("send to a connection reset before its preface: %v (exited %v, not sent %v), want both", err, errors.Is(err, ErrPluginExited), errors.Is(err, ErrNotSent))
				}
			}
		})
	}
}

// TestSendDuringPluginDeathIsNotNotSent: a send the plugin received and
// then died during may have been delivered: it is ErrPluginExited and not
// ErrNotSent (repeating it could post the message twice).
func TestSendDuringPluginDeathIsNotNotSent(t *testing.T) {
	t.Parallel()
	ln := listen(t)
	got := make(chan struct{})
	srv := grpc.NewServer()
	pb.RegisterChannelServiceServer(srv, &hangingChannel{got: got})
	go func() { _ = srv.Serve(ln) }()
	p := dial(t, ln.Addr().String())
	errc := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := p.Send(ctx, channel.SendRequest{ChatID: "1", Text: "hi"})
		errc <- err
	}()
	<-got
	srv.Stop() // closes the connection under the call
	err := <-errc
	if !errors.Is(err, ErrPluginExited) || errors.Is(err, ErrNotSent) {
		t.Fatalf("send the plugin died during: %v (exited %v, not sent %v), want exited only", err, errors.Is(err, ErrPluginExited), errors.Is(err, ErrNotSent))
	}
}

type hangingChannel struct {
	pb.UnimplementedChannelServiceServer
	got chan struct{}
}

func (h *hangingChannel) Send(ctx context.Context, _ *pb.SendRequest) (*pb.SendResponse, error) {
	close(h.got)
	<-ctx.Done()
	return nil, ctx.Err()
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	return ln
}

// acceptEach serves ln in the background: each connection it accepts
// goes to f, until ln is closed.
func acceptEach(ln net.Listener, f func(net.Conn)) {
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			f(c)
		}
	}()
}

// dial connects as a host does (DialOptions).
func dial(t *testing.T, addr string) *Plugin {
	t.Helper()
	conn, err := grpc.NewClient(addr, append(DialOptions(), grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return Wrap(conn)
}
