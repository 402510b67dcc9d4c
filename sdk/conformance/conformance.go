// Package conformance is the behaviour every clawhost plugin owes the host,
// written as checks that run against any plugin a pluginclient.Plugin reaches: one
// served in-process by sdktest.Conformance (a Go plugin's own tests) or a
// launched binary in any language (`clawhost plugin test PATH`).
//
// A check starts fresh plugins through its Target, drives them through the
// host's client and returns what is wrong as an error (several problems
// joined). It never imports "testing": the caller decides how a failure is
// reported.
package conformance

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/clawhost/clawhost/sdk/pluginclient"
	"github.com/clawhost/clawhost/sdk/schema"
)

// Instance is one started plugin under test.
type Instance struct {
	// Plugin is the host's client of the plugin.
	Plugin *pluginclient.Plugin
	// DataDir is the private directory passed to Configure.
	DataDir string
}

// Target says how to start the plugin under test and, for a channel, how
// to make its platform produce a message.
type Target struct {
	// Start starts a fresh plugin. Called once or more per check.
	Start func(ctx context.Context) (Instance, error)
	// Stop ends an instance Start returned and says what went wrong
	// stopping it (it did not exit on SIGTERM within the grace period, it
	// exited with an error, it logged errors while stopping); nil when it
	// stopped cleanly. Nil: instances end without the check's help (an
	// in-process harness tears them down), and the stop check always
	// passes.
	Stop func(Instance) error
	// Config is the JSON of the config {} block passed to Validate and
	// Configure, as the host would send it (defaults filled in).
	Config []byte
	// Inject makes the platform produce one inbound message with the given
	// text and returns the chat id it will arrive in ("": not checked). It
	// must not wait for the host's ack: checks ack later or never. Nil:
	// the checks that need inbound messages are skipped.
	Inject func(ctx context.Context, inst Instance, text string) (chatID string, err error)
	// UnknownChatID is a chat id the platform does not know: Send to it
	// must fail with channel.CodeChatNotFound. Empty means
	// DefaultUnknownChatID.
	UnknownChatID string
	// Exec is a command line ("/name args") the execute check runs
	// through a command plugin's Execute; empty: that check is skipped.
	Exec string
	// Workdir is the chat directory the execute and call_tools checks
	// tell the plugin (command.Request.Workdir, tool.CallRequest.Workdir);
	// empty: none.
	Workdir string
	// Timeout bounds each step; zero means 10s.
	Timeout time.Duration
}

// DefaultUnknownChatID is the chat the unknown_chat check sends to when
// Target.UnknownChatID is empty. No real platform has it; the loopback
// examples have no chat whose id starts with "missing-".
const DefaultUnknownChatID = "missing-conformance-chat"

// Check is one behaviour.
type Check struct {
	// Name is short and stable: "describe", "receive_ack_redeliver".
	Name string
	// Run checks it. note, when not empty, is a remark for a passing check
	// ("Validate is not implemented"). An error wrapping ErrSkipped means
	// the check does not apply to this target.
	Run func(ctx context.Context, tg Target) (note string, err error)
}

// ErrSkipped is wrapped by the error of a check that cannot run against its
// target (Inject is nil).
var ErrSkipped = errors.New("skipped")

// ChannelChecks are what a channel plugin owes the host (the contract of
// channel.Channel): describe and schema sanity, inbound delivery with host
// acks and redelivery of unacked messages on a new stream and after a
// Nack, sends up to the declared text limit, multi-byte text at that limit
// counted in the declared unit (accepted; one unit more refused with
// message_too_long or split), chat_not_found for a chat the platform does
// not know, and typed errors for the optional capabilities it does not
// declare.
func ChannelChecks() []Check {
	return []Check{
		{"describe", checkDescribeChannel},
		{"receive_ack_redeliver", inbound(checkReceiveAckRedeliver)},
		{"nack_redeliver", inbound(checkNackRedeliver)},
		{"send", inbound(checkSend)},
		{"text_limit", inbound(checkTextLimit)},
		{"unknown_chat", checkUnknownChat},
		{"optional_capabilities", onChannel(checkOptionalCapabilities)},
	}
}

// PluginChecks are what every plugin owes the host whatever its kinds:
// Describe names it and at least one kind, ConfigSchema is well formed,
// Validate (when implemented) and Configure accept Target.Config, Probe
// (when implemented) answers a well-formed report in an unconfigured
// process, the status
// stream (when implemented) reports a known state, and the plugin stops
// cleanly (see Target.Stop).
func PluginChecks() []Check {
	return []Check{
		{"describe", checkDescribe},
		{"config_schema", checkSchema},
		{"validate_configure", checkValidateConfigure},
		ProbeCheck(),
		{"watch_status", checkWatchStatus},
		{"stop", checkStop},
	}
}

// ProbeCheck is the check of a plugin's live checks (sdk.Plugin.Probe):
// a plugin without them passes with a note; otherwise the report, in a process
// never configured, names every check and says what to do about one that
// did not pass. What the checks found is the note (a test token the
// platform refuses is not a failure of the plugin).
func ProbeCheck() Check { return Check{"probe", checkProbe} }

// CommandChecks are what a command plugin owes the host: a well-formed
// command list, and a well-formed answer to Target.Exec (skipped without
// one).
func CommandChecks() []Check {
	return []Check{{"list_commands", checkListCommands}, {"execute", checkExecute}}
}

// HookChecks are what a hook plugin owes the host: it answers a
// before_agent_start request.
func HookChecks() []Check {
	return []Check{{"before_agent_start", checkBeforeAgentStart}}
}

// ReceivedChecks are what a message_received hook owes the host: an
// answer within the timeout, the same answer to a repeated call id, and a
// drop that says why.
func ReceivedChecks() []Check {
	return []Check{{"message_received", checkMessageReceived}}
}

// SendingChecks are what a message_sending hook owes the host: an answer
// within the timeout and the same answer to a repeated call id.
func SendingChecks() []Check {
	return []Check{{"message_sending", checkMessageSending}}
}

// EndChecks are what an agent_end hook owes the host: an answer within
// the timeout, also to a repeated call id (at-least-once delivery).
func EndChecks() []Check {
	return []Check{{"agent_end", checkAgentEnd}}
}

// For returns the checks for a plugin so described: PluginChecks, then the
// checks of each kind it offers (a channel's describe check is named
// channel_describe there).
func For(d pluginclient.Description) []Check {
	cs := PluginChecks()
	if d.Channel {
		ch := ChannelChecks()
		ch[0].Name = "channel_describe"
		cs = append(cs, ch...)
	}
	if d.Command {
		cs = append(cs, CommandChecks()...)
	}
	if d.Hook {
		cs = append(cs, HookChecks()...)
	}
	if d.Received {
		cs = append(cs, ReceivedChecks()...)
	}
	if d.Sending {
		cs = append(cs, SendingChecks()...)
	}
	if d.Ender {
		cs = append(cs, EndChecks()...)
	}
	if d.Tool {
		cs = append(cs, ToolChecks()...)
	}
	return cs
}

func (tg Target) timeout() time.Duration {
	if tg.Timeout > 0 {
		return tg.Timeout
	}
	return 10 * time.Second
}

// start starts an instance; stop ends it and returns Target.Stop's verdict.
func (tg Target) start(ctx context.Context) (Instance, func() error, error) {
	inst, err := tg.Start(ctx)
	if err != nil {
		return Instance{}, nil, fmt.Errorf("start: %w", err)
	}
	stopped := false
	return inst, func() error {
		if stopped || tg.Stop == nil {
			return nil
		}
		stopped = true
		return tg.Stop(inst)
	}, nil
}

// configured starts an instance and configures it with Target.Config.
func (tg Target) configured(ctx context.Context) (Instance, pluginclient.Description, func() error, error) {
	inst, stop, err := tg.start(ctx)
	if err != nil {
		return Instance{}, pluginclient.Description{}, nil, err
	}
	d, err := inst.Plugin.Describe(ctx)
	if err != nil {
		_ = stop()
		return Instance{}, pluginclient.Description{}, nil, fmt.Errorf("describe: %w", err)
	}
	diags, err := inst.Plugin.Configure(ctx, schema.Config{Instance: "conformance", JSON: tg.Config, DataDir: inst.DataDir})
	if err == nil && hasErrors(diags) {
		err = fmt.Errorf("the plugin rejected the config: %w", diags)
	}
	if err != nil {
		_ = stop()
		return Instance{}, pluginclient.Description{}, nil, fmt.Errorf("configure: %w", err)
	}
	// Described again after Configure, as the host does: capabilities may
	// depend on the configuration.
	if d, err = inst.Plugin.Describe(ctx); err != nil {
		_ = stop()
		return Instance{}, pluginclient.Description{}, nil, fmt.Errorf("describe after configure: %w", err)
	}
	return inst, d, stop, nil
}

// check runs f for one check on a started instance, configured with
// Target.Config first when configure is set, under a context bounded by
// Target.Timeout; the instance is stopped after.
func (tg Target) check(ctx context.Context, configure bool, f func(ctx context.Context, inst Instance) (string, error)) (string, error) {
	var inst Instance
	var stop func() error
	var err error
	if configure {
		inst, _, stop, err = tg.configured(ctx)
	} else {
		inst, stop, err = tg.start(ctx)
	}
	if err != nil {
		return "", err
	}
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, tg.timeout())
	defer cancel()
	return f(ctx, inst)
}

// problems collects the problems of one check.
type problems []error

func (p *problems) addf(format string, args ...any) { *p = append(*p, fmt.Errorf(format, args...)) }

// add records err when it is not nil.
func (p *problems) add(err error) {
	if err != nil {
		*p = append(*p, err)
	}
}

func (p problems) err() error { return errors.Join(p...) }
