package wire

import (
	"context"
	"encoding/hex"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	pb "github.com/clawhost/clawhost/proto/gen/clawhost/v1"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/command"
	"github.com/clawhost/clawhost/sdk/hook"
	"github.com/clawhost/clawhost/sdk/schema"
)

// recordingChannel records what reaches the plugin's code: Configure and
// Send calls, with the media paths a Send would open.
type recordingChannel struct {
	mu         sync.Mutex
	configured int
	sent       []channel.SendRequest
}

func (c *recordingChannel) configure(context.Context, schema.Config) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.configured++
	return nil
}

func (c *recordingChannel) Capabilities() channel.Capabilities { return channel.Capabilities{} }

func (c *recordingChannel) Run(ctx context.Context, _ channel.Inbox) error { <-ctx.Done(); return nil }

func (c *recordingChannel) Send(_ context.Context, req channel.SendRequest) (channel.SendResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sent = append(c.sent, req)
	return channel.SendResponse{MessageIDs: []string{"m1"}}, nil
}

func (c *recordingChannel) Execute(context.Context, command.Request) (command.Response, error) {
	return command.Response{}, nil
}

func (c *recordingChannel) Commands() []command.Spec { return nil }

func (c *recordingChannel) BeforeAgentStart(context.Context, hook.Request) (hook.Response, error) {
	return hook.Response{}, nil
}

func (c *recordingChannel) calls() (configured int, sent []channel.SendRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.configured, slices.Clone(c.sent)
}

// serveWithSecret serves a channel, command and hook plugin (every service
// the sdk registers) over a real socket with secret, and returns the
// serving server and the recorder of what reached the plugin's code.
func serveWithSecret(t *testing.T, secret string) (*Serving, *recordingChannel) {
	t.Helper()
	t.Setenv(envSocketDir, t.TempDir())
	rec := &recordingChannel{}
	srv := newTestServer(t, &Impl{Name: "auth", Channel: rec, Command: rec, Hook: rec, Configure: rec.configure})
	srv.Secret = secret
	s, err := Serve(srv, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s, rec
}

// dial connects to s as a plain gRPC client with opts (no secret unless
// they add it).
func dial(t *testing.T, s *Serving, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient("unix:"+s.Addr().String(), append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// call makes one call of method with an empty request and returns its
// error: unary, or a stream's first answer.
func call(ctx context.Context, conn *grpc.ClientConn, method string, stream bool) error {
	if !stream {
		return conn.Invoke(ctx, method, &emptypb.Empty{}, &emptypb.Empty{})
	}
	s, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, method)
	if err != nil {
		return err
	}
	// A send to a stream the server already ended fails with io.EOF; the
	// status comes with the receive.
	_ = s.SendMsg(&emptypb.Empty{})
	_ = s.CloseSend()
	return s.RecvMsg(&emptypb.Empty{})
}

// TestEveryCallNeedsTheSecret: every method of every service on the
// plugin's server (clawhost's, health, go-plugin's controller) and of the
// go-plugin services it does not serve (broker, stdio), unary and
// streaming, is refused with Unauthenticated without the secret, with
// another one or with two values, and nothing reaches the plugin's code;
// with the secret, calls are answered (unserved services as Unimplemented,
// as go-plugin's client expects) and Shutdown stops the server.
func TestEveryCallNeedsTheSecret(t *testing.T) {
	secret := NewSecret()
	s, rec := serveWithSecret(t, secret)

	type method struct {
		name   string
		stream bool
	}
	var methods []method
	for svc, info := range s.srv.GetServiceInfo() {
		for _, m := range info.Methods {
			methods = append(methods, method{"/" + svc + "/" + m.Name, m.IsServerStream || m.IsClientStream})
		}
	}
	methods = append(methods, method{"/plugin.GRPCBroker/StartStream", true}, method{"/plugin.GRPCStdio/StreamStdio", true}, method{"/no.Such/Method", false})
	// The services the sdk must serve, so that a registration that goes
	// missing cannot shrink the test.
	for _, want := range []string{"/clawhost.v1.PluginService/Configure", "/clawhost.v1.ChannelService/Send", "/clawhost.v1.ChannelService/Receive",
		"/clawhost.v1.CommandService/Execute", "/clawhost.v1.HookService/BeforeAgentStart", "/grpc.health.v1.Health/Check", shutdownMethod} {
		if !slices.ContainsFunc(methods, func(m method) bool { return m.name == want }) {
			t.Fatalf("the server does not serve %s", want)
		}
	}

	strangers := []struct {
		name string
		opts []grpc.DialOption
	}{
		{"no secret", nil},
		{"another secret", []grpc.DialOption{grpc.WithPerRPCCredentials(Credentials{Secret: NewSecret()})}},
		{"a prefix of the secret", []grpc.DialOption{grpc.WithPerRPCCredentials(Credentials{Secret: secret[:32]})}},
		{"the secret twice", []grpc.DialOption{grpc.WithPerRPCCredentials(Credentials{Secret: secret}), grpc.WithChainUnaryInterceptor(doubleSecret(secret)), grpc.WithChainStreamInterceptor(doubleSecretStream(secret))}},
	}
	for _, st := range strangers {
		conn := dial(t, s, st.opts...)
		for _, m := range methods {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err := call(ctx, conn, m.name, m.stream)
			cancel()
			if status.Code(err) != codes.Unauthenticated {
				t.Errorf("%s with %s: %v; want Unauthenticated", m.name, st.name, err)
			}
		}
	}
	if configured, sent := rec.calls(); configured != 0 || len(sent) != 0 {
		t.Fatalf("refused calls reached the plugin: %d Configure, %d Send", configured, len(sent))
	}
	select {
	case <-s.Done():
		t.Fatal("a refused Shutdown stopped the server")
	default:
	}

	host := dial(t, s, grpc.WithPerRPCCredentials(Credentials{Secret: secret}))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, c := range []struct {
		method string
		stream bool
		want   codes.Code
	}{
		{"/clawhost.v1.PluginService/Describe", false, codes.OK},
		{"/clawhost.v1.PluginService/Configure", false, codes.OK},
		{"/clawhost.v1.ChannelService/Send", false, codes.OK},
		{"/clawhost.v1.PluginService/WatchStatus", true, codes.OK}, // answers the current status at once
		{"/grpc.health.v1.Health/Check", false, codes.OK},
		{"/plugin.GRPCBroker/StartStream", true, codes.Unimplemented},
		{"/plugin.GRPCStdio/StreamStdio", true, codes.Unimplemented},
	} {
		if err := call(ctx, host, c.method, c.stream); status.Code(err) != c.want {
			t.Errorf("%s with the secret: %v; want %s", c.method, err, c.want)
		}
	}
	if configured, sent := rec.calls(); configured != 1 || len(sent) != 1 {
		t.Errorf("the host's calls reached the plugin: %d Configure, %d Send; want 1 and 1", configured, len(sent))
	}
	// The answer may lose the race with the stop closing its connection.
	if err := call(ctx, host, shutdownMethod, false); err != nil && status.Code(err) != codes.Unavailable {
		t.Fatalf("Shutdown with the secret: %v", err)
	}
	select {
	case <-s.Done():
	case <-ctx.Done():
		t.Fatal("the host's Shutdown did not stop the server")
	}
}

// doubleSecret adds the secret a second time to each unary call: a header
// with two values is not the secret.
func doubleSecret(secret string) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		return invoker(metadata.AppendToOutgoingContext(ctx, SecretHeader, secret), method, req, reply, cc, opts...)
	}
}

// doubleSecretStream is doubleSecret for streams.
func doubleSecretStream(secret string) grpc.StreamClientInterceptor {
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		return streamer(metadata.AppendToOutgoingContext(ctx, SecretHeader, secret), desc, cc, method, opts...)
	}
}

// TestMediaGrants: a Send reaches the channel only when each of its media
// paths carries the host's grant for that path, chat and thread; any other
// is refused with media_not_granted (not retryable) and the channel never
// sees it. The host's connection (SignUnary) grants what it sends.
func TestMediaGrants(t *testing.T) {
	secret := NewSecret()
	s, rec := serveWithSecret(t, secret)
	authed := pb.NewChannelServiceClient(dial(t, s, grpc.WithPerRPCCredentials(Credentials{Secret: secret})))
	token := filepath.Join(t.TempDir(), "admin.token")
	other := filepath.Join(t.TempDir(), "reply.txt")

	cases := []struct {
		name    string
		chat    string
		thread  string
		grant   []byte
		granted bool
	}{
		{"missing", "c1", "", nil, false},
		{"forged", "c1", "", []byte("0123456789abcdef0123456789abcdef"), false},
		{"for another path", "c1", "", MediaGrant(secret, "c1", "", other), false},
		{"for another chat", "c1", "", MediaGrant(secret, "c2", "", token), false},
		{"for another thread", "c1", "t1", MediaGrant(secret, "c1", "t2", token), false},
		{"with another secret", "c1", "", MediaGrant(NewSecret(), "c1", "", token), false},
		{"chat and thread shifted", "c1", "", MediaGrant(secret, "c", "1", token), false},
		{"valid", "c1", "t1", MediaGrant(secret, "c1", "t1", token), true},
	}
	for _, c := range cases {
		_, before := rec.calls()
		req := &pb.SendRequest{ChatId: c.chat, ThreadId: c.thread, Text: "x", Media: []*pb.OutboundMedia{
			{Path: other, Grant: MediaGrant(secret, c.chat, c.thread, other)}, // one good file does not carry a bad one
			{Path: token, Grant: c.grant},
		}}
		res, err := authed.Send(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		_, after := rec.calls()
		reached := len(after) > len(before)
		if c.granted {
			if res.GetError() != nil || !reached || after[len(after)-1].Media[1].Path != token {
				t.Errorf("%s grant: error %v, reached the channel: %v; want the send", c.name, res.GetError(), reached)
			}
			continue
		}
		code := channel.Code(res.GetError().GetCode())
		if code != channel.CodeMediaNotGranted || code.Retryable() {
			t.Errorf("%s grant: error %v; want %s, not retryable", c.name, res.GetError(), channel.CodeMediaNotGranted)
		}
		if reached {
			t.Errorf("%s grant: the channel got the send", c.name)
		}
	}

	// The host's connection grants each path of what it sends.
	signed := pb.NewChannelServiceClient(dial(t, s, grpc.WithPerRPCCredentials(Credentials{Secret: secret}), grpc.WithUnaryInterceptor(SignUnary(secret))))
	res, err := signed.Send(context.Background(), &pb.SendRequest{ChatId: "c9", Media: []*pb.OutboundMedia{{Path: token}, {Path: other}}})
	if err != nil || res.GetError() != nil {
		t.Fatalf("a send on the host's connection: %v, %v", err, res.GetError())
	}
}

// TestNoSecretAcceptsEveryone: a plugin served without a secret (started
// by a host that gives none) answers calls without one and checks no
// grant, as before authentication existed.
func TestNoSecretAcceptsEveryone(t *testing.T) {
	s, rec := serveWithSecret(t, "")
	res, err := pb.NewChannelServiceClient(dial(t, s)).Send(context.Background(), &pb.SendRequest{ChatId: "c1", Media: []*pb.OutboundMedia{{Path: "/tmp/f"}}})
	if err != nil || res.GetError() != nil {
		t.Fatalf("send without a secret: %v, %v", err, res.GetError())
	}
	if _, sent := rec.calls(); len(sent) != 1 {
		t.Fatalf("%d sends reached the channel, want 1", len(sent))
	}
}

// TestMediaGrantVector: the grant of proto/PROTOCOL.md's example ("Media
// grants"), which a plugin in another language checks its own against.
func TestMediaGrantVector(t *testing.T) {
	t.Parallel()
	const want = "8ee845585adfbb66091243ba99f73217e47b5507e2fd35e57efd0cb61168baac"
	got := hex.EncodeToString(MediaGrant("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", "42", "7", "/tmp/report.txt"))
	if got != want {
		t.Errorf("grant %s, want %s", got, want)
	}
}
