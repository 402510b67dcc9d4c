// Package pluginclient is the client side of the plugin protocol, for hosts: the
// go-plugin handshake and plugin set a host launches plugins with, and
// Plugin, a typed client over one plugin's gRPC connection that speaks the
// sdk's contract types.
//
// Plugin authors do not need this package; clawhost's core and sdktest use it.
// Its API has go-plugin's types (HandshakeConfig, PluginSet, ReattachConfig)
// because a host drives go-plugin itself; no type of the sdk's internal
// packages appears in it.
package pluginclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	pb "github.com/clawhost/clawhost/proto/gen/clawhost/v1"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/command"
	"github.com/clawhost/clawhost/sdk/hook"
	"github.com/clawhost/clawhost/sdk/internal/wire"
	"github.com/clawhost/clawhost/sdk/probe"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/status"
	"github.com/clawhost/clawhost/sdk/tool"
)

// Handshake is the go-plugin handshake of clawhost plugins.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  wire.ProtocolVersion,
	MagicCookieKey:   wire.MagicCookieKey,
	MagicCookieValue: wire.MagicCookieValue,
}

// PluginName is the name to Dispense.
const PluginName = wire.PluginName

// PluginSet returns the go-plugin plugin set of a host-side client (the
// Plugins of go-plugin's client config).
func PluginSet() plugin.PluginSet {
	return plugin.PluginSet{wire.PluginName: grpcPlugin{}}
}

// grpcPlugin is the go-plugin glue on the host side: Dispense returns the
// raw connection, which Wrap turns into a Plugin. (The plugin side does
// not use go-plugin's server: sdk/internal/wire/serve.go says why.)
type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
}

// GRPCServer implements plugin.GRPCPlugin; a host never serves plugins.
func (grpcPlugin) GRPCServer(*plugin.GRPCBroker, *grpc.Server) error {
	return errors.New("clawhost plugins are served by the sdk, not by go-plugin")
}

// GRPCClient implements plugin.GRPCPlugin.
func (grpcPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return c, nil
}

// DialOptions are the gRPC options a host uses (message size limits).
func DialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(wire.MaxMessageBytes), grpc.MaxCallSendMsgSize(wire.MaxMessageBytes)),
		grpc.WithInitialWindowSize(wire.WindowBytes), grpc.WithInitialConnWindowSize(wire.WindowBytes),
		// Tell a call that never left the host (sent.go).
		grpc.WithStatsHandler(sentTracker{}),
		grpc.WithChainUnaryInterceptor(unsentInterceptor),
	}
}

// Transport errors, as returned by every Plugin method. Business errors are
// *channel.Error instead.
var (
	// ErrPluginExited: the plugin process is gone or the connection broke.
	ErrPluginExited = errors.New("plugin exited")
	// ErrNotSent accompanies ErrPluginExited when the call certainly never
	// reached the plugin: the connection to it could not be made (the
	// process had died before the call). Such a call may be repeated
	// without risk of doing it twice, unlike one the plugin died during.
	ErrNotSent = errors.New("the call did not reach the plugin")
	// ErrUnimplemented: the plugin does not offer this call (an older or
	// smaller plugin). Callers treat it as "feature absent".
	ErrUnimplemented = errors.New("not implemented by plugin")
)

// mapErr maps a gRPC transport error to the package's errors. It is the one
// place where gRPC status codes are interpreted.
func mapErr(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w", op, err)
	}
	st, ok := grpcstatus.FromError(err)
	if !ok {
		return fmt.Errorf("%s: %w", op, err)
	}
	switch st.Code() {
	case codes.Canceled:
		return fmt.Errorf("%s: %w", op, context.Canceled)
	case codes.DeadlineExceeded:
		return fmt.Errorf("%s: %w", op, context.DeadlineExceeded)
	case codes.Unimplemented:
		return fmt.Errorf("%s: %w", op, ErrUnimplemented)
	case codes.Unavailable:
		// A call gRPC never queued on a connection did not reach the
		// plugin (neverSent: DialOptions' tracker, sent.go). Without the
		// tracker, the message of a call failed while the connection could
		// not be set up says so (nothing listens, or the process accepted
		// the connection and died before the HTTP/2 prefaces were
		// exchanged: gRPC hands a transport to calls only after them).
		if errors.As(err, new(neverSent)) || notConnected(st.Message()) {
			return fmt.Errorf("%s: %w: %w: %s", op, ErrPluginExited, ErrNotSent, st.Message())
		}
		return fmt.Errorf("%s: %w: %s", op, ErrPluginExited, st.Message())
	default:
		return fmt.Errorf("%s: %s: %s", op, st.Code(), st.Message())
	}
}

// notConnected reports whether a gRPC Unavailable message is one of a
// connection that was never established (see mapErr): the errors gRPC's
// HTTP/2 client returns while setting a connection up, before any call
// may use it.
func notConnected(msg string) bool {
	msg = strings.ToLower(msg) // gRPC spells both "Error while dialing" and "error while dialing"
	for _, setup := range setupErrors {
		if strings.Contains(msg, setup) {
			return true
		}
	}
	return false
}

var setupErrors = []string{
	"error while dialing",
	"failed to write client preface",
	"preface mismatch",
	"failed to write initial settings frame",
	"failed to write window update",
	"authentication handshake failed",
	"error reading server preface",
	"initial http2 frame from server is not a settings frame",
}

// Description is what a plugin says about itself.
type Description struct {
	Name, Version, SDKVersion string
	// Setup is what a person needs before filling in the config block
	// (sdk.Plugin.Setup); "" for nothing.
	Setup                  string
	Channel, Command, Hook bool
	// Received, Sending and Ender: the plugin is a message_received,
	// message_sending or agent_end hook.
	Received, Sending, Ender bool
	// Tool: the plugin offers the agent tools (ListTools, CallTool).
	Tool bool
	// Capabilities is set for channels. Typing, Edit, Reactions and
	// CommandMenu report the optional interfaces the channel implements;
	// CommandMenuPerChat, that it shows a menu per chat too
	// (SetChatCommands).
	// Before the channel is configured only IDForms and DirectToSender
	// are set (the rest may depend on the configuration).
	Capabilities                         channel.Capabilities
	Typing, Edit, Reactions, CommandMenu bool
	CommandMenuPerChat                   bool
	// Invites: the channel sends its invitations to rooms for the host
	// to answer with AnswerInvite.
	Invites bool
}

// Kinds names the kinds the plugin offers, in a fixed order: channel,
// command, hook (before_agent_start), message_received, message_sending,
// agent_end.
func (d Description) Kinds() []string {
	var ks []string
	for _, k := range []struct {
		name string
		on   bool
	}{{"channel", d.Channel}, {"command", d.Command}, {"hook", d.Hook}, {"message_received", d.Received}, {"message_sending", d.Sending}, {"agent_end", d.Ender}, {"tool", d.Tool}} {
		if k.on {
			ks = append(ks, k.name)
		}
	}
	return ks
}

// Plugin is a typed client of one plugin process.
type Plugin struct {
	plug pb.PluginServiceClient
	ch   pb.ChannelServiceClient
	cmd  pb.CommandServiceClient
	hk   pb.HookServiceClient
	rcv  pb.MessageReceivedServiceClient
	snd  pb.MessageSendingServiceClient
	end  pb.AgentEndServiceClient
	tl   pb.ToolServiceClient
	// calls carries the hot channel calls once the plugin declared the
	// call stream (calls.go).
	calls calls
}

// Wrap returns a Plugin over conn (the value go-plugin's Dispense returned).
func Wrap(conn grpc.ClientConnInterface) *Plugin {
	p := &Plugin{
		plug: pb.NewPluginServiceClient(conn),
		ch:   pb.NewChannelServiceClient(conn),
		cmd:  pb.NewCommandServiceClient(conn),
		hk:   pb.NewHookServiceClient(conn),
		rcv:  pb.NewMessageReceivedServiceClient(conn),
		snd:  pb.NewMessageSendingServiceClient(conn),
		end:  pb.NewAgentEndServiceClient(conn),
		tl:   pb.NewToolServiceClient(conn),
	}
	p.calls.ch = p.ch
	return p
}

// Describe asks the plugin who it is.
func (p *Plugin) Describe(ctx context.Context) (Description, error) {
	r, err := p.plug.Describe(ctx, &pb.DescribeRequest{})
	if err != nil {
		return Description{}, mapErr("describe", err)
	}
	d := Description{Name: r.GetName(), Version: r.GetVersion(), SDKVersion: r.GetSdkVersion(), Setup: r.GetSetup()}
	for _, k := range r.GetKinds() {
		switch k {
		case pb.Kind_KIND_CHANNEL:
			d.Channel = true
		case pb.Kind_KIND_COMMAND:
			d.Command = true
		case pb.Kind_KIND_HOOK:
			d.Hook = true
		case pb.Kind_KIND_MESSAGE_RECEIVED:
			d.Received = true
		case pb.Kind_KIND_MESSAGE_SENDING:
			d.Sending = true
		case pb.Kind_KIND_AGENT_END:
			d.Ender = true
		case pb.Kind_KIND_TOOL:
			d.Tool = true
		}
	}
	switch c := r.GetChannel(); {
	case c == nil:
	case r.GetChannelUnconfigured():
		// Before Configure: what the host reads at validate, no limits.
		d.Capabilities = channel.Capabilities{IDForms: wire.IDFormsFromProto(c.GetIdForms()), DirectToSender: c.GetDirectToSender()}
	default:
		d.Capabilities = wire.CapabilitiesFromProto(c)
		d.Typing, d.Edit, d.Reactions, d.CommandMenu = c.GetTyping(), c.GetEdit(), c.GetReactions(), c.GetCommandMenu()
		d.CommandMenuPerChat = d.CommandMenu && c.GetCommandMenuPerChat()
		d.Invites = c.GetInvites()
		p.calls.use(c.GetCallStream())
	}
	return d, nil
}

// ConfigSchema returns the plugin's config schema. Attribute defaults are
// json.RawMessage.
func (p *Plugin) ConfigSchema(ctx context.Context) (schema.Schema, error) {
	r, err := p.plug.ConfigSchema(ctx, &pb.ConfigSchemaRequest{})
	if err != nil {
		return nil, mapErr("config schema", err)
	}
	return wire.SchemaFromProto(r.GetAttributes()), nil
}

// Configure configures the plugin. Diagnostics are the plugin's verdict on
// the config; error is a transport failure.
func (p *Plugin) Configure(ctx context.Context, cfg schema.Config) (schema.Diagnostics, error) {
	r, err := p.plug.Configure(ctx, &pb.ConfigureRequest{Instance: cfg.Instance, ConfigJson: cfg.JSON, DataDir: cfg.DataDir})
	if err != nil {
		return nil, mapErr("configure", err)
	}
	return wire.DiagnosticsFromProto(r.GetDiagnostics()), nil
}

// Validate asks the plugin to check cfg without applying it. Diagnostics
// are the plugin's verdict; ErrUnimplemented means the plugin predates
// Validate (it checks its block only in Configure).
func (p *Plugin) Validate(ctx context.Context, cfg schema.Config) (schema.Diagnostics, error) {
	r, err := p.plug.Validate(ctx, &pb.ValidateRequest{Instance: cfg.Instance, ConfigJson: cfg.JSON})
	if err != nil {
		return nil, mapErr("validate", err)
	}
	return wire.DiagnosticsFromProto(r.GetDiagnostics()), nil
}

// WatchStatus opens the plugin's status stream: each report is sent on the
// returned channel, which is closed when the stream ends (ctx ended, the
// plugin exited); the error, if any, is then available from the returned
// func. ErrUnimplemented (from the first call) means the plugin never
// reports: it is ready while it runs.
func (p *Plugin) WatchStatus(ctx context.Context) (<-chan status.Status, func() error, error) {
	ws, err := p.plug.WatchStatus(ctx, &pb.WatchStatusRequest{})
	if err != nil {
		return nil, nil, mapErr("watch status", err)
	}
	c := make(chan status.Status, 1)
	end := make(chan struct{})
	var serr error
	go func() {
		defer close(end)
		defer close(c)
		for {
			m, err := ws.Recv()
			if err != nil {
				if err == io.EOF {
					err = fmt.Errorf("watch status: %w: stream closed", ErrPluginExited)
				} else {
					err = mapErr("watch status", err)
				}
				serr = err
				return
			}
			select {
			case c <- wire.StatusFromProto(m):
			case <-ctx.Done():
				serr = ctx.Err()
				return
			}
		}
	}()
	return c, func() error { <-end; return serr }, nil
}

// Retry asks the plugin to try again what its status's Attention.Retry
// named. A business error (*channel.Error) says why it cannot.
func (p *Plugin) Retry(ctx context.Context) error {
	r, err := p.plug.Retry(ctx, &pb.RetryRequest{})
	if err != nil {
		return mapErr("retry", err)
	}
	return wire.ErrorFromProto(r.GetError())
}

// Probe asks the plugin to check cfg against the platform, live (cfg.JSON,
// cfg.Instance and cfg.DataDir are sent). ErrUnimplemented means the
// plugin has no live checks; a business error (*channel.Error) says why
// the probe could not run. Failed checks are in the report.
func (p *Plugin) Probe(ctx context.Context, cfg schema.Config) (probe.Report, error) {
	r, err := p.plug.Probe(ctx, &pb.ProbeRequest{Instance: cfg.Instance, ConfigJson: cfg.JSON, DataDir: cfg.DataDir})
	if err != nil {
		return probe.Report{}, mapErr("probe", err)
	}
	if err := wire.ErrorFromProto(r.GetError()); err != nil {
		return probe.Report{}, fmt.Errorf("probe: %w", err)
	}
	return wire.ProbeFromProto(r), nil
}

// ListCommands lists a command plugin's commands.
func (p *Plugin) ListCommands(ctx context.Context) ([]command.Spec, error) {
	r, err := p.cmd.ListCommands(ctx, &pb.ListCommandsRequest{})
	if err != nil {
		return nil, mapErr("list commands", err)
	}
	return wire.SpecsFromProto(r.GetCommands()), nil
}

// Execute runs a command.
func (p *Plugin) Execute(ctx context.Context, req command.Request) (command.Response, error) {
	r, err := p.cmd.Execute(ctx, wire.ExecuteToProto(req))
	if err != nil {
		return command.Response{}, mapErr("execute", err)
	}
	if e := r.GetError(); e != nil {
		return command.Response{}, wire.ErrorFromProto(e)
	}
	return command.Response{Replies: wire.RepliesFromProto(r.GetReplies())}, nil
}

// ListTools asks a tool plugin for its tools.
func (p *Plugin) ListTools(ctx context.Context) ([]tool.Spec, error) {
	r, err := p.tl.ListTools(ctx, &pb.ListToolsRequest{})
	if err != nil {
		return nil, mapErr("list tools", err)
	}
	return wire.ToolSpecsFromProto(r.GetTools()), nil
}

// CallTool runs one call of a plugin's tool. A business error (the
// plugin's Call returned one) comes back as an error too.
func (p *Plugin) CallTool(ctx context.Context, req tool.CallRequest) (tool.Result, error) {
	r, err := p.tl.CallTool(ctx, wire.ToolCallToProto(req))
	if err != nil {
		return tool.Result{}, mapErr("call tool", err)
	}
	if e := r.GetError(); e != nil {
		return tool.Result{}, wire.ErrorFromProto(e)
	}
	return wire.ToolResultFromProto(r), nil
}

// BeforeAgentStart calls a hook.
func (p *Plugin) BeforeAgentStart(ctx context.Context, req hook.Request) (hook.Response, error) {
	r, err := p.hk.BeforeAgentStart(ctx, wire.HookToProto(req))
	if err != nil {
		return hook.Response{}, mapErr("before_agent_start", err)
	}
	if e := r.GetError(); e != nil {
		return hook.Response{}, wire.ErrorFromProto(e)
	}
	return hook.Response{PrependContext: r.GetPrependContext(), SystemPrompt: r.GetSystemPrompt()}, nil
}

// MessageReceived calls a message_received hook.
func (p *Plugin) MessageReceived(ctx context.Context, req hook.ReceivedRequest) (hook.ReceivedResponse, error) {
	r, err := p.rcv.MessageReceived(ctx, wire.ReceivedToProto(req))
	if err != nil {
		return hook.ReceivedResponse{}, mapErr("message_received", err)
	}
	if e := r.GetError(); e != nil {
		return hook.ReceivedResponse{}, wire.ErrorFromProto(e)
	}
	return wire.ReceivedResponseFromProto(r), nil
}

// MessageSending calls a message_sending hook.
func (p *Plugin) MessageSending(ctx context.Context, req hook.SendingRequest) (hook.SendingResponse, error) {
	r, err := p.snd.MessageSending(ctx, wire.SendingToProto(req))
	if err != nil {
		return hook.SendingResponse{}, mapErr("message_sending", err)
	}
	if e := r.GetError(); e != nil {
		return hook.SendingResponse{}, wire.ErrorFromProto(e)
	}
	return wire.SendingResponseFromProto(r), nil
}

// AgentEnd calls an agent_end hook.
func (p *Plugin) AgentEnd(ctx context.Context, end hook.End) error {
	r, err := p.end.AgentEnd(ctx, wire.EndToProto(end))
	if err != nil {
		return mapErr("agent_end", err)
	}
	if e := r.GetError(); e != nil {
		return wire.ErrorFromProto(e)
	}
	return nil
}

// EnvReattach names the environment variable with which a host attaches to
// plugins an author started by hand in debug mode (see package sdk) instead
// of launching them: a JSON object from instance name to reattach config,
// as the plugin prints it, e.g.
//
//	CLAWHOST_REATTACH='{"tick":{"Protocol":"grpc","ProtocolVersion":1,"Pid":4242,"Test":true,"Addr":{"Network":"unix","String":"/tmp/plugin123"},"Secret":"9f86…"}}'
const EnvReattach = wire.EnvReattach

// Reattach is a plugin started by hand to attach to, as its line in
// EnvReattach names it.
type Reattach struct {
	// ReattachConfig is go-plugin's reattach config (Launch.Reattach).
	*plugin.ReattachConfig
	// Secret is the secret the plugin serves with (Launch.Secret): the sdk's
	// debug mode makes one and prints it in the line. Empty in a line of an
	// older sdk, whose plugin authenticates nothing.
	Secret string
}

// ParseReattach parses the value of EnvReattach into go-plugin reattach
// configs and secrets by instance name, for the Reattach and Secret of
// Launch. Every config is in test mode: the host does not kill a process
// it did not start, it only closes the connection (the sdk's debug mode
// then exits). An empty value is no instances.
func ParseReattach(v string) (map[string]*Reattach, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	var raw map[string]wire.Reattach
	if err := json.Unmarshal([]byte(v), &raw); err != nil {
		return nil, fmt.Errorf("parse %s: %w", EnvReattach, err)
	}
	out := make(map[string]*Reattach, len(raw))
	for inst, r := range raw {
		rc, err := reattachConfig(r)
		if err != nil {
			return nil, fmt.Errorf("parse %s: instance %q: %w", EnvReattach, inst, err)
		}
		out[inst] = &Reattach{ReattachConfig: rc, Secret: r.Secret}
	}
	return out, nil
}

// reattachConfig turns r into a go-plugin reattach config. Test is always
// set: the host never kills a process it did not start.
func reattachConfig(r wire.Reattach) (*plugin.ReattachConfig, error) {
	var addr net.Addr
	switch r.Addr.Network {
	case "unix":
		addr = &net.UnixAddr{Net: "unix", Name: r.Addr.String}
	case "tcp":
		a, err := net.ResolveTCPAddr("tcp", r.Addr.String)
		if err != nil {
			return nil, fmt.Errorf("reattach address %q: %w", r.Addr.String, err)
		}
		addr = a
	default:
		return nil, fmt.Errorf("reattach address: network %q is not unix or tcp", r.Addr.Network)
	}
	if r.Protocol != string(plugin.ProtocolGRPC) {
		return nil, fmt.Errorf("reattach protocol %q: clawhost plugins speak %q", r.Protocol, plugin.ProtocolGRPC)
	}
	if r.Pid <= 0 {
		return nil, fmt.Errorf("reattach: no pid")
	}
	return &plugin.ReattachConfig{Protocol: plugin.ProtocolGRPC, ProtocolVersion: r.ProtocolVersion, Addr: addr, Pid: r.Pid, Test: true}, nil
}
