package wire

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "github.com/clawhost/clawhost/proto/gen/clawhost/v1"
	"github.com/clawhost/clawhost/sdk/channel"
)

// The host authenticates itself to its plugin with a secret made for each
// launch: anyone else who reaches the plugin's socket (a process of the
// same user, code the agent runs) is refused every call, and a Send may
// name only files the host granted for it (proto/PROTOCOL.md,
// "Authentication" and "Media grants").
//
// The host hands the secret to the process it starts in EnvSecret; the
// plugin reads it once, removes it from its environment (its children do
// not inherit it) and requires it, as the SecretHeader metadata, on every
// call to every service of its server. The host's connection adds it to
// every call (Credentials) and a grant to every media path of a Send
// (SignUnary).
//
// A plugin started without EnvSecret (by a host older than this, by a test
// that serves in-process without one) accepts every caller, as before:
// the variable is in a process's environment from its exec on, so whoever
// can start the plugin without it runs it as their own process, with no
// more than they already have; a plugin the host started always has it.

// EnvSecret is the environment variable in which the host hands a plugin
// process its secret: 64 hex digits (32 random bytes), new for each launch.
const EnvSecret = "CLAWHOST_PLUGIN_SECRET"

// SecretHeader is the gRPC metadata key (an HTTP/2 header) that carries
// the secret on every call.
const SecretHeader = "clawhost-plugin-secret"

// grantContext starts the message a media grant's HMAC is computed over,
// so that a grant cannot be taken for an HMAC of anything else.
const grantContext = "clawhost media grant v1"

// NewSecret returns a new secret for one plugin launch: 32 bytes from
// crypto/rand, hex-encoded.
func NewSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand, Go 1.24+)
	return hex.EncodeToString(b)
}

// secretOK reports, in constant time, whether the call of ctx carries
// secret.
func secretOK(ctx context.Context, secret string) bool {
	md, _ := metadata.FromIncomingContext(ctx)
	got := md.Get(SecretHeader)
	if len(got) != 1 {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(got[0]), []byte(secret)) == 1
}

// errUnauthenticated is the answer to a call without the host's secret. It
// says neither what was expected nor what came.
var errUnauthenticated = status.Error(codes.Unauthenticated, "this plugin answers only the host that started it")

// AuthUnary refuses, with codes.Unauthenticated, every unary call that
// does not carry secret. It must be the first interceptor of the chain.
func AuthUnary(secret string) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if !secretOK(ctx, secret) {
			return nil, errUnauthenticated
		}
		return handler(ctx, req)
	}
}

// AuthStream is AuthUnary for streams, the unknown-service handler's
// included.
func AuthStream(secret string) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if !secretOK(ss.Context(), secret) {
			return errUnauthenticated
		}
		return handler(srv, ss)
	}
}

// Credentials are the host's per-call credentials on its connection to a
// plugin: the secret on every call, unary and streaming, go-plugin's own
// (the controller, the broker, stdio, health) included.
type Credentials struct{ Secret string }

// GetRequestMetadata implements credentials.PerRPCCredentials.
func (c Credentials) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{SecretHeader: c.Secret}, nil
}

// RequireTransportSecurity implements credentials.PerRPCCredentials: the
// connection is a plaintext unix socket (a loopback port on Windows) that
// only the host's user may open; the secret keeps out the others who can.
func (Credentials) RequireTransportSecurity() bool { return false }

var _ credentials.PerRPCCredentials = Credentials{}

// sendMethod is the full name of ChannelService.Send, the call SignUnary
// adds media grants to.
const sendMethod = "/clawhost.v1.ChannelService/Send"

// SignUnary is the host's client interceptor that grants each media path
// of a Send (the request as the caller built it: the grants are added in
// place) for that send, with secret.
func SignUnary(secret string) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if r, ok := req.(*pb.SendRequest); ok && method == sendMethod {
			for _, m := range r.GetMedia() {
				m.Grant = MediaGrant(secret, r.GetChatId(), r.GetThreadId(), m.GetPath())
			}
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
}

// callsMethod is the full name of ChannelService.Calls, the stream
// SignStream adds media grants to.
const callsMethod = "/clawhost.v1.ChannelService/Calls"

// SignStream is SignUnary for the Sends written to the Calls stream.
func SignStream(secret string) grpc.StreamClientInterceptor {
	return func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		cs, err := streamer(ctx, desc, cc, method, opts...)
		if err != nil || method != callsMethod {
			return cs, err
		}
		return signingStream{cs, secret}, nil
	}
}

// signingStream grants the media of each Send written to it.
type signingStream struct {
	grpc.ClientStream
	secret string
}

func (s signingStream) SendMsg(m any) error {
	if c, ok := m.(*pb.Call); ok {
		if r := c.GetSend(); r != nil {
			for _, md := range r.GetMedia() {
				md.Grant = MediaGrant(s.secret, r.GetChatId(), r.GetThreadId(), md.GetPath())
			}
		}
	}
	return s.ClientStream.SendMsg(m)
}

// MediaGrant is the grant of path for a send to chatID and threadID:
// HMAC-SHA256 keyed with the secret (its hex text as bytes) over the
// context string and the three values, each preceded by its length in
// bytes as a big-endian uint64, so no two different sends share a
// message.
func MediaGrant(secret, chatID, threadID, path string) []byte {
	mac := hmac.New(sha256.New, []byte(secret))
	var n [8]byte
	for _, f := range []string{grantContext, chatID, threadID, path} {
		binary.BigEndian.PutUint64(n[:], uint64(len(f)))
		mac.Write(n[:])
		mac.Write([]byte(f))
	}
	return mac.Sum(nil)
}

// CheckMediaGrants returns a *channel.Error with code
// channel.CodeMediaNotGranted when a media path of req has no valid grant
// made with secret for req's chat and thread. An empty secret checks
// nothing (the plugin runs without authentication, see EnvSecret).
func CheckMediaGrants(secret string, req *pb.SendRequest) error {
	if secret == "" {
		return nil
	}
	for i, m := range req.GetMedia() {
		if m.GetPath() == "" {
			continue
		}
		want := MediaGrant(secret, req.GetChatId(), req.GetThreadId(), m.GetPath())
		if !hmac.Equal(m.GetGrant(), want) {
			return channel.Errorf(channel.CodeMediaNotGranted, "media %d (%s): %s", i, m.GetPath(), grantProblem(m.GetGrant()))
		}
	}
	return nil
}

// grantProblem says what is wrong with a grant that does not match.
func grantProblem(g []byte) string {
	if len(g) == 0 {
		return "the host did not grant this file for this send"
	}
	return fmt.Sprintf("its grant (%d bytes) is not the host's for this file and chat", len(g))
}
