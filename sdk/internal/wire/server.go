package wire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/clawhost/clawhost/proto/gen/clawhost/v1"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/command"
	"github.com/clawhost/clawhost/sdk/hook"
	"github.com/clawhost/clawhost/sdk/internal/slogh"
	"github.com/clawhost/clawhost/sdk/probe"
	"github.com/clawhost/clawhost/sdk/schema"
	sdkstatus "github.com/clawhost/clawhost/sdk/status"
	"github.com/clawhost/clawhost/sdk/tool"
)

// Impl is what a plugin offers; nil kinds are absent.
type Impl struct {
	Name, Version   string
	Setup           string
	Schema          schema.Schema
	Validate        func(ctx context.Context, cfg schema.Config) error
	Configure       func(ctx context.Context, cfg schema.Config) error
	Retry           func(ctx context.Context) error
	Probe           func(ctx context.Context, cfg schema.Config) (probe.Report, error)
	Channel         channel.Channel
	Command         command.Handler
	Hook            hook.Hook
	MessageReceived hook.Received
	MessageSending  hook.Sending
	AgentEnd        hook.Ender
	Tool            tool.Provider
}

// Kinds lists the kinds Impl offers.
func (i *Impl) Kinds() []pb.Kind {
	var ks []pb.Kind
	if i.Channel != nil {
		ks = append(ks, pb.Kind_KIND_CHANNEL)
	}
	if i.Command != nil {
		ks = append(ks, pb.Kind_KIND_COMMAND)
	}
	if i.Hook != nil {
		ks = append(ks, pb.Kind_KIND_HOOK)
	}
	if i.MessageReceived != nil {
		ks = append(ks, pb.Kind_KIND_MESSAGE_RECEIVED)
	}
	if i.MessageSending != nil {
		ks = append(ks, pb.Kind_KIND_MESSAGE_SENDING)
	}
	if i.AgentEnd != nil {
		ks = append(ks, pb.Kind_KIND_AGENT_END)
	}
	if i.Tool != nil {
		ks = append(ks, pb.Kind_KIND_TOOL)
	}
	return ks
}

// Server serves an Impl over gRPC. Ctx is the plugin's lifetime: canceling
// it stops the channel's Run.
type Server struct {
	pb.UnimplementedPluginServiceServer
	pb.UnimplementedChannelServiceServer
	pb.UnimplementedCommandServiceServer
	pb.UnimplementedHookServiceServer
	pb.UnimplementedMessageReceivedServiceServer
	pb.UnimplementedMessageSendingServiceServer
	pb.UnimplementedAgentEndServiceServer
	pb.UnimplementedToolServiceServer

	Impl    *Impl
	Log     hclog.Logger
	Ctx     context.Context
	Inbox   *Inbox
	DataDir func(instance string) string
	// Fatal is called when the channel's Run fails; it ends the process.
	Fatal func(error)
	// Secret is the host's secret (EnvSecret, auth.go): Serve refuses
	// every call without it, Send every media path without a grant made
	// with it. Empty: every caller is accepted and no grant is checked.
	Secret string

	// Status holds the plugin's latest status report.
	Status Status

	// NoCallStream serves no Calls stream and does not declare it, as a
	// plugin built before it: tests of the host's unary calls set it.
	NoCallStream bool

	// once remembers the tool calls this process answered, by
	// idempotency key.
	once onceCalls

	mu         sync.Mutex
	configured bool
	// described is configured, readable without mu.
	described atomic.Bool
	runDone   chan struct{}
	stream    context.CancelFunc

	// earlyMu guards what Describe learned before Configure (addressing).
	earlyMu     sync.Mutex
	earlyRead   bool
	configuring bool
	early       *pb.ChannelCapabilities
}

// Register registers the services Impl offers on s.
func (srv *Server) Register(s *grpc.Server) {
	pb.RegisterPluginServiceServer(s, srv)
	if srv.Impl.Channel != nil {
		pb.RegisterChannelServiceServer(s, srv)
	}
	if srv.Impl.Command != nil {
		pb.RegisterCommandServiceServer(s, srv)
	}
	if srv.Impl.Hook != nil {
		pb.RegisterHookServiceServer(s, srv)
	}
	if srv.Impl.MessageReceived != nil {
		pb.RegisterMessageReceivedServiceServer(s, srv)
	}
	if srv.Impl.MessageSending != nil {
		pb.RegisterMessageSendingServiceServer(s, srv)
	}
	if srv.Impl.AgentEnd != nil {
		pb.RegisterAgentEndServiceServer(s, srv)
	}
	if srv.Impl.Tool != nil {
		pb.RegisterToolServiceServer(s, srv)
	}
}

// Describe implements PluginService. Before Configure it answers with the
// plugin's identity and kinds only: a channel's capabilities may depend on
// its configuration (the host asks again once it configured it; a host
// sharing its database with others asks first, to keep a channel in
// standby unconfigured).
func (srv *Server) Describe(ctx context.Context, _ *pb.DescribeRequest) (*pb.DescribeResponse, error) {
	out := &pb.DescribeResponse{Name: srv.Impl.Name, Version: srv.Impl.Version, Kinds: srv.Impl.Kinds(), SdkVersion: SDKVersion, Setup: srv.Impl.Setup}
	// Not under srv.mu: Configure holds it while the plugin configures
	// itself, and a Describe meanwhile (a liveness probe) must answer.
	ch := srv.Impl.Channel
	switch {
	case ch == nil:
	case srv.described.Load():
		caps := CapabilitiesToProto(ch.Capabilities())
		_, caps.Typing = ch.(channel.Typer)
		_, caps.Edit = ch.(channel.Editor)
		_, caps.Reactions = ch.(channel.Reactor)
		_, caps.CommandMenu = ch.(channel.CommandMenu)
		_, caps.CommandMenuPerChat = ch.(channel.ChatCommandMenu)
		_, caps.Invites = ch.(channel.InviteAnswerer)
		caps.CallStream = !srv.NoCallStream
		if o, ok := ch.(channel.Offerer); ok {
			off := o.Offered()
			caps.Typing = caps.Typing && off.Typing
			caps.Edit = caps.Edit && off.Edit
			caps.Reactions = caps.Reactions && off.Reactions
			caps.CommandMenu = caps.CommandMenu && off.CommandMenu
			caps.CommandMenuPerChat = caps.CommandMenu && off.CommandMenuPerChat
		}
		out.Channel = caps
	default:
		out.Channel = srv.addressing(ch)
		out.ChannelUnconfigured = out.Channel != nil
	}
	return out, nil
}

// addressing is what Describe tells of a channel before Configure: its id
// forms and DirectToSender, which never depend on the configuration (the
// host normalises the ids of its config with them at validate). The
// channel is asked once, and never once Configure began, which may be
// writing what Capabilities reads; a Capabilities that panics unconfigured
// declares nothing. Nil when the channel declares neither.
func (srv *Server) addressing(ch channel.Channel) *pb.ChannelCapabilities {
	srv.earlyMu.Lock()
	defer srv.earlyMu.Unlock()
	if srv.earlyRead || srv.configuring {
		return srv.early
	}
	srv.earlyRead = true
	var caps channel.Capabilities
	func() {
		defer func() {
			if r := recover(); r != nil {
				srv.Log.Warn("Capabilities panicked before Configure: no id forms declared", "panic", fmt.Sprint(r))
			}
		}()
		caps = ch.Capabilities()
	}()
	if len(caps.IDForms) > 0 || caps.DirectToSender {
		srv.early = &pb.ChannelCapabilities{IdForms: IDFormsToProto(caps.IDForms), DirectToSender: caps.DirectToSender}
	}
	return srv.early
}

// ConfigSchema implements PluginService.
func (srv *Server) ConfigSchema(ctx context.Context, _ *pb.ConfigSchemaRequest) (*pb.ConfigSchemaResponse, error) {
	as, err := SchemaToProto(srv.Impl.Schema)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "encode schema default: %v", err)
	}
	return &pb.ConfigSchemaResponse{Attributes: as}, nil
}

// Configure implements PluginService. It starts the channel's Run after a
// successful configuration.
func (srv *Server) Configure(ctx context.Context, req *pb.ConfigureRequest) (*pb.ConfigureResponse, error) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.configured {
		return &pb.ConfigureResponse{Diagnostics: []*pb.Diagnostic{{Summary: "plugin already configured", Detail: "Configure is called once per process"}}}, nil
	}
	cfg := schema.Config{Instance: req.GetInstance(), DataDir: req.GetDataDir(), JSON: req.GetConfigJson(), Logger: slogh.New(srv.Log), Status: &srv.Status}
	srv.earlyMu.Lock()
	srv.configuring = true
	srv.earlyMu.Unlock()
	if f := srv.Impl.Configure; f != nil {
		if err := f(ctx, cfg); err != nil {
			return &pb.ConfigureResponse{Diagnostics: diagnosticsOf("configure failed", err)}, nil
		}
	}
	srv.configured = true
	srv.described.Store(true)
	if ch := srv.Impl.Channel; ch != nil {
		srv.runDone = make(chan struct{})
		go srv.run(ch)
	}
	return &pb.ConfigureResponse{}, nil
}

// diagnosticsOf turns a Validate or Configure error into diagnostics:
// schema.Diagnostics keep their attribute paths, any other error is one
// diagnostic for the block as a whole.
func diagnosticsOf(summary string, err error) []*pb.Diagnostic {
	var diags schema.Diagnostics
	if errors.As(err, &diags) {
		return DiagnosticsToProto(diags)
	}
	return []*pb.Diagnostic{{Summary: summary, Detail: err.Error()}}
}

// Validate implements PluginService: the plugin's own checks, with no side
// effects. A plugin without a Validate func finds nothing to object to
// (the host's schema decoding has already checked types and required
// attributes).
func (srv *Server) Validate(ctx context.Context, req *pb.ValidateRequest) (*pb.ValidateResponse, error) {
	f := srv.Impl.Validate
	if f == nil {
		return &pb.ValidateResponse{}, nil
	}
	cfg := schema.Config{Instance: req.GetInstance(), JSON: req.GetConfigJson(), Logger: slogh.New(srv.Log), Status: sdkstatus.Discard}
	if err := f(ctx, cfg); err != nil {
		return &pb.ValidateResponse{Diagnostics: diagnosticsOf("invalid configuration", err)}, nil
	}
	return &pb.ValidateResponse{}, nil
}

// WatchStatus implements PluginService: the current status at once, then
// each change, until the host ends the stream or the plugin stops.
func (srv *Server) WatchStatus(_ *pb.WatchStatusRequest, stream grpc.ServerStreamingServer[pb.PluginStatus]) error {
	ctx := stream.Context()
	for {
		st, changed := srv.Status.current()
		if err := stream.Send(StatusToProto(st)); err != nil {
			return err
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil
		case <-srv.Ctx.Done():
			return status.Error(codes.Unavailable, "plugin is stopping")
		}
	}
}

// Probe implements PluginService: the plugin's live checks, in a process
// that may never be configured. A plugin without a Probe func answers
// Unimplemented, which the host reads as "no live checks".
func (srv *Server) Probe(ctx context.Context, req *pb.ProbeRequest) (*pb.ProbeResponse, error) {
	f := srv.Impl.Probe
	if f == nil {
		return nil, status.Error(codes.Unimplemented, "the plugin has no probe")
	}
	cfg := schema.Config{Instance: req.GetInstance(), DataDir: req.GetDataDir(), JSON: req.GetConfigJson(), Logger: slogh.New(srv.Log), Status: sdkstatus.Discard}
	r, err := f(ctx, cfg)
	if err != nil {
		return &pb.ProbeResponse{Error: ErrorToProto(err)}, nil
	}
	return ProbeToProto(r), nil
}

// Retry implements PluginService.
func (srv *Server) Retry(ctx context.Context, _ *pb.RetryRequest) (*pb.RetryResponse, error) {
	f := srv.Impl.Retry
	if f == nil {
		return &pb.RetryResponse{Error: ErrorToProto(errUnsupported)}, nil
	}
	return &pb.RetryResponse{Error: ErrorToProto(f(ctx))}, nil
}

func (srv *Server) run(ch channel.Channel) {
	defer close(srv.runDone)
	err := ch.Run(srv.Ctx, srv.Inbox)
	if err != nil && srv.Ctx.Err() == nil {
		srv.Log.Error("channel stopped", "error", err)
		if srv.Fatal != nil {
			srv.Fatal(fmt.Errorf("channel run: %w", err))
		}
	}
}

// RunDone is closed when the channel's Run has returned; nil if Run never
// started.
func (srv *Server) RunDone() <-chan struct{} {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	return srv.runDone
}

// Receive implements ChannelService. A new stream replaces an older one.
func (srv *Server) Receive(_ *pb.ReceiveRequest, stream grpc.ServerStreamingServer[pb.InboundMessage]) error {
	srv.mu.Lock()
	if !srv.configured {
		srv.mu.Unlock()
		return status.Error(codes.FailedPrecondition, "receive before configure")
	}
	if srv.stream != nil {
		srv.stream()
	}
	ctx, cancel := context.WithCancel(stream.Context())
	srv.stream = cancel
	srv.mu.Unlock()
	defer cancel()
	err := srv.Inbox.Stream(ctx, stream.Send)
	if errors.Is(err, ErrStopping) {
		return status.Error(codes.Unavailable, "plugin is stopping")
	}
	return err
}

// Ack implements ChannelService.
func (srv *Server) Ack(_ context.Context, req *pb.AckRequest) (*pb.AckResponse, error) {
	srv.Inbox.Ack(req.GetDeliveryIds())
	return &pb.AckResponse{}, nil
}

// Nack implements ChannelService: the deliveries go back to the inbox,
// which sends again after the host's retry_after.
func (srv *Server) Nack(_ context.Context, req *pb.NackRequest) (*pb.NackResponse, error) {
	retry := time.Duration(req.GetRetryAfterMs()) * time.Millisecond
	if n := srv.Inbox.Nack(req.GetDeliveryIds(), retry); n > 0 {
		srv.Log.Warn("host could not store inbound messages; redelivering them", "count", n, "reason", req.GetReason(), "retry_after", retry.String())
	}
	return &pb.NackResponse{}, nil
}

// Send implements ChannelService.
func (srv *Server) Send(ctx context.Context, req *pb.SendRequest) (*pb.SendResponse, error) {
	if err := CheckMediaGrants(srv.Secret, req); err != nil {
		srv.Log.Warn("refused a send naming a file the host did not grant", "error", err)
		return &pb.SendResponse{Error: ErrorToProto(err)}, nil
	}
	res, err := srv.Impl.Channel.Send(ctx, SendFromProto(req))
	if err != nil {
		return &pb.SendResponse{Error: ErrorToProto(err)}, nil
	}
	return &pb.SendResponse{MessageIds: res.MessageIDs}, nil
}

var errUnsupported = channel.Errorf(channel.CodeUnsupported, "not supported by this channel")

// SetTyping implements ChannelService.
func (srv *Server) SetTyping(ctx context.Context, req *pb.SetTypingRequest) (*pb.SetTypingResponse, error) {
	t, ok := srv.Impl.Channel.(channel.Typer)
	if !ok {
		return &pb.SetTypingResponse{Error: ErrorToProto(errUnsupported)}, nil
	}
	err := t.SetTyping(ctx, channel.TypingRequest{ChatID: req.GetChatId(), ThreadID: req.GetThreadId(), On: req.GetOn()})
	return &pb.SetTypingResponse{Error: ErrorToProto(err)}, nil
}

// Edit implements ChannelService.
func (srv *Server) Edit(ctx context.Context, req *pb.EditRequest) (*pb.EditResponse, error) {
	e, ok := srv.Impl.Channel.(channel.Editor)
	if !ok {
		return &pb.EditResponse{Error: ErrorToProto(errUnsupported)}, nil
	}
	err := e.Edit(ctx, EditFromProto(req))
	return &pb.EditResponse{Error: ErrorToProto(err)}, nil
}

// React implements ChannelService.
func (srv *Server) React(ctx context.Context, req *pb.ReactRequest) (*pb.ReactResponse, error) {
	r, ok := srv.Impl.Channel.(channel.Reactor)
	if !ok {
		return &pb.ReactResponse{Error: ErrorToProto(errUnsupported)}, nil
	}
	err := r.React(ctx, channel.ReactRequest{ChatID: req.GetChatId(), ThreadID: req.GetThreadId(), MessageID: req.GetMessageId(), Emoji: req.GetEmoji(), Remove: req.GetRemove()})
	return &pb.ReactResponse{Error: ErrorToProto(err)}, nil
}

// SetCommands implements ChannelService.
func (srv *Server) SetCommands(ctx context.Context, req *pb.SetCommandsRequest) (*pb.SetCommandsResponse, error) {
	m, ok := srv.Impl.Channel.(channel.CommandMenu)
	if !ok {
		return &pb.SetCommandsResponse{Error: ErrorToProto(errUnsupported)}, nil
	}
	menu := ChatMenuFromProto(req)
	if menu.ChatID == "" {
		return &pb.SetCommandsResponse{Error: ErrorToProto(m.SetCommands(ctx, menu.Commands))}, nil
	}
	cm, ok := m.(channel.ChatCommandMenu)
	if !ok {
		return &pb.SetCommandsResponse{Error: ErrorToProto(errUnsupported)}, nil
	}
	return &pb.SetCommandsResponse{Error: ErrorToProto(cm.SetChatCommands(ctx, menu))}, nil
}

// AnswerInvite implements ChannelService.
func (srv *Server) AnswerInvite(ctx context.Context, req *pb.AnswerInviteRequest) (*pb.AnswerInviteResponse, error) {
	a, ok := srv.Impl.Channel.(channel.InviteAnswerer)
	if !ok {
		return &pb.AnswerInviteResponse{Error: ErrorToProto(errUnsupported)}, nil
	}
	return &pb.AnswerInviteResponse{Error: ErrorToProto(a.AnswerInvite(ctx, req.GetChatId(), req.GetJoin(), req.GetReason()))}, nil
}

// mediaChunkSize is the size of one DownloadMedia stream message.
const mediaChunkSize = 256 << 10

// DownloadMedia implements ChannelService.
func (srv *Server) DownloadMedia(req *pb.DownloadMediaRequest, stream grpc.ServerStreamingServer[pb.MediaChunk]) error {
	d, ok := srv.Impl.Channel.(channel.MediaDownloader)
	if !ok {
		return stream.Send(&pb.MediaChunk{Error: ErrorToProto(errUnsupported)})
	}
	rc, info, err := d.DownloadMedia(stream.Context(), channel.DownloadRequest{Ref: req.GetRef(), MaxBytes: req.GetMaxBytes()})
	if err != nil {
		return stream.Send(&pb.MediaChunk{Error: ErrorToProto(err)})
	}
	defer rc.Close()
	buf := make([]byte, mediaChunkSize)
	first := true
	var total int64
	for {
		n, rerr := rc.Read(buf)
		if n > 0 {
			total += int64(n)
			if max := req.GetMaxBytes(); max > 0 && total > max {
				return stream.Send(&pb.MediaChunk{Error: ErrorToProto(channel.Errorf(channel.CodeMessageTooLong, "media is larger than %d bytes", max))})
			}
			c := &pb.MediaChunk{Data: append([]byte(nil), buf[:n]...)}
			if first {
				c.Mime, c.Size, first = info.MIME, info.Size, false
			}
			if err := stream.Send(c); err != nil {
				return err
			}
		}
		if rerr == io.EOF {
			if first {
				return stream.Send(&pb.MediaChunk{Mime: info.MIME, Size: 0})
			}
			return nil
		}
		if rerr != nil {
			return stream.Send(&pb.MediaChunk{Error: ErrorToProto(channel.Errorf(channel.CodeUnavailable, "read media: %v", rerr))})
		}
	}
}

// ListCommands implements CommandService.
func (srv *Server) ListCommands(context.Context, *pb.ListCommandsRequest) (*pb.ListCommandsResponse, error) {
	return &pb.ListCommandsResponse{Commands: SpecsToProto(srv.Impl.Command.Commands())}, nil
}

// Execute implements CommandService.
func (srv *Server) Execute(ctx context.Context, req *pb.ExecuteRequest) (*pb.ExecuteResponse, error) {
	res, err := srv.Impl.Command.Execute(ctx, ExecuteFromProto(req))
	if err != nil {
		return &pb.ExecuteResponse{Error: ErrorToProto(err)}, nil
	}
	return &pb.ExecuteResponse{Replies: RepliesToProto(res.Replies)}, nil
}

// BeforeAgentStart implements HookService.
func (srv *Server) BeforeAgentStart(ctx context.Context, req *pb.BeforeAgentStartRequest) (*pb.BeforeAgentStartResponse, error) {
	res, err := srv.Impl.Hook.BeforeAgentStart(ctx, HookFromProto(req))
	if err != nil {
		return &pb.BeforeAgentStartResponse{Error: ErrorToProto(err)}, nil
	}
	return &pb.BeforeAgentStartResponse{PrependContext: res.PrependContext, SystemPrompt: res.SystemPrompt}, nil
}

// RecoverUnary turns a panic in a unary handler into an Internal error (with
// the stack in the plugin log) instead of killing the plugin.
func RecoverUnary(log hclog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		defer func() {
			if r := recover(); r != nil {
				log.Error("panic in plugin handler", "method", info.FullMethod, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				err = status.Errorf(codes.Internal, "plugin panicked in %s: %v", info.FullMethod, r)
			}
		}()
		return handler(ctx, req)
	}
}

// RecoverStream is RecoverUnary for streams.
func RecoverStream(log hclog.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
		defer func() {
			if r := recover(); r != nil {
				log.Error("panic in plugin handler", "method", info.FullMethod, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				err = status.Errorf(codes.Internal, "plugin panicked in %s: %v", info.FullMethod, r)
			}
		}()
		return handler(srv, ss)
	}
}

// MessageReceived implements MessageReceivedService.
func (srv *Server) MessageReceived(ctx context.Context, req *pb.MessageReceivedRequest) (*pb.MessageReceivedResponse, error) {
	res, err := srv.Impl.MessageReceived.MessageReceived(ctx, ReceivedFromProto(req))
	if err != nil {
		return &pb.MessageReceivedResponse{Error: ErrorToProto(err)}, nil
	}
	return ReceivedResponseToProto(res), nil
}

// MessageSending implements MessageSendingService.
func (srv *Server) MessageSending(ctx context.Context, req *pb.MessageSendingRequest) (*pb.MessageSendingResponse, error) {
	res, err := srv.Impl.MessageSending.MessageSending(ctx, SendingFromProto(req))
	if err != nil {
		return &pb.MessageSendingResponse{Error: ErrorToProto(err)}, nil
	}
	return SendingResponseToProto(res), nil
}

// AgentEnd implements AgentEndService.
func (srv *Server) AgentEnd(ctx context.Context, req *pb.AgentEndRequest) (*pb.AgentEndResponse, error) {
	if err := srv.Impl.AgentEnd.AgentEnd(ctx, EndFromProto(req)); err != nil {
		return &pb.AgentEndResponse{Error: ErrorToProto(err)}, nil
	}
	return &pb.AgentEndResponse{}, nil
}
