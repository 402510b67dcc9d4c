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
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/command"
	"github.com/clawhost/clawhost/sdk/hook"
	"github.com/clawhost/clawhost/sdk/pluginclient"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/status"
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
		{"receive_ack_redeliver", checkReceiveAckRedeliver},
		{"nack_redeliver", checkNackRedeliver},
		{"send", checkSend},
		{"text_limit", checkTextLimit},
		{"unknown_chat", checkUnknownChat},
		{"optional_capabilities", checkOptionalCapabilities},
	}
}

// PluginChecks are what every plugin owes the host whatever its kinds:
// Describe names it and at least one kind, ConfigSchema is well formed,
// Validate (when implemented) and Configure accept Target.Config, the status
// stream (when implemented) reports a known state, and the plugin stops
// cleanly (see Target.Stop).
func PluginChecks() []Check {
	return []Check{
		{"describe", checkDescribe},
		{"config_schema", checkSchema},
		{"validate_configure", checkValidateConfigure},
		{"watch_status", checkWatchStatus},
		{"stop", checkStop},
	}
}

// CommandChecks are what a command plugin owes the host: a well-formed
// command list.
func CommandChecks() []Check {
	return []Check{{"list_commands", checkListCommands}}
}

// HookChecks are what a hook plugin owes the host: it answers a
// before_agent_start request.
func HookChecks() []Check {
	return []Check{{"before_agent_start", checkBeforeAgentStart}}
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

// problems collects the problems of one check.
type problems []error

func (p *problems) addf(format string, args ...any) { *p = append(*p, fmt.Errorf(format, args...)) }

func (p problems) err() error { return errors.Join(p...) }

func checkDescribe(ctx context.Context, tg Target) (string, error) {
	inst, stop, err := tg.start(ctx)
	if err != nil {
		return "", err
	}
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, tg.timeout())
	defer cancel()
	d, err := inst.Plugin.Describe(ctx)
	if err != nil {
		return "", fmt.Errorf("describe: %w", err)
	}
	var p problems
	if d.Name == "" {
		p.addf("describe: empty name")
	}
	var kinds []string
	for k, on := range map[string]bool{"channel": d.Channel, "command": d.Command, "hook": d.Hook} {
		if on {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) == 0 {
		p.addf("describe: the plugin offers no kind")
	}
	return fmt.Sprintf("%s %s, %d kind(s)", d.Name, d.Version, len(kinds)), p.err()
}

// checkDescribeChannel checks a configured channel's description: the
// capabilities are described once the channel is configured (before, a
// channel answers with its kinds only).
func checkDescribeChannel(ctx context.Context, tg Target) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, tg.timeout())
	defer cancel()
	inst, d, stop, err := tg.configured(ctx)
	if err != nil {
		return "", err
	}
	defer stop()
	if !d.Channel {
		return "", fmt.Errorf("describe: plugin %q does not offer a channel", d.Name)
	}
	var p problems
	if d.Name == "" {
		p.addf("describe: empty name")
	}
	if d.Capabilities.MaxTextLength <= 0 {
		p.addf("capabilities: max text length %d", d.Capabilities.MaxTextLength)
	}
	s, err := inst.Plugin.ConfigSchema(ctx)
	if err != nil {
		return "", errors.Join(append(p, fmt.Errorf("config schema: %w", err))...)
	}
	p = append(p, schemaProblems(s)...)
	return "", p.err()
}

func checkSchema(ctx context.Context, tg Target) (string, error) {
	inst, stop, err := tg.start(ctx)
	if err != nil {
		return "", err
	}
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, tg.timeout())
	defer cancel()
	s, err := inst.Plugin.ConfigSchema(ctx)
	if err != nil {
		return "", fmt.Errorf("config schema: %w", err)
	}
	return fmt.Sprintf("%d attribute(s)", len(s)), schemaProblems(s).err()
}

// schemaProblems: uniquely named, described attributes with JSON defaults.
func schemaProblems(s schema.Schema) problems {
	var p problems
	seen := map[string]bool{}
	for _, a := range s {
		if a.Name == "" || seen[a.Name] {
			p.addf("config schema: empty or duplicate attribute name %q", a.Name)
		}
		seen[a.Name] = true
		if a.Description == "" {
			p.addf("config schema: attribute %q has no description", a.Name)
		}
		if raw, ok := a.Default.(json.RawMessage); ok && len(raw) > 0 && !json.Valid(raw) {
			p.addf("config schema: attribute %q: default is not JSON: %q", a.Name, raw)
		}
	}
	return p
}

func checkValidateConfigure(ctx context.Context, tg Target) (string, error) {
	inst, stop, err := tg.start(ctx)
	if err != nil {
		return "", err
	}
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, tg.timeout())
	defer cancel()
	cfg := schema.Config{Instance: "conformance", JSON: tg.Config, DataDir: inst.DataDir}
	var note string
	diags, err := inst.Plugin.Validate(ctx, cfg)
	switch {
	case errors.Is(err, pluginclient.ErrUnimplemented):
		note = "Validate is not implemented: the config is checked by Configure only"
	case err != nil:
		return "", fmt.Errorf("validate: %w", err)
	case hasErrors(diags):
		return "", fmt.Errorf("validate rejected the config: %w", diags)
	}
	diags, err = inst.Plugin.Configure(ctx, cfg)
	if err != nil {
		return note, fmt.Errorf("configure: %w", err)
	}
	if hasErrors(diags) {
		return note, fmt.Errorf("configure rejected the config: %w", diags)
	}
	return note, nil
}

func checkWatchStatus(ctx context.Context, tg Target) (string, error) {
	inst, _, stop, err := tg.configured(ctx)
	if err != nil {
		return "", err
	}
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, tg.timeout())
	defer cancel()
	c, _, err := inst.Plugin.WatchStatus(ctx)
	if errors.Is(err, pluginclient.ErrUnimplemented) {
		return "WatchStatus is not implemented: ready while running", nil
	}
	if err != nil {
		return "", fmt.Errorf("watch status: %w", err)
	}
	select {
	case s, ok := <-c:
		if !ok {
			// A stream that ends at once answered Unimplemented on the
			// first receive: the same as not implemented.
			return "WatchStatus is not implemented: ready while running", nil
		}
		switch s.State {
		case status.Ready, status.NeedsAttention, status.Degraded:
			return "state " + string(s.State), nil
		}
		return "", fmt.Errorf("watch status: unknown state %q (want ready, needs_attention or degraded)", s.State)
	case <-ctx.Done():
		return "", fmt.Errorf("watch status: no status within %s (a plugin sends its current status at once)", tg.timeout())
	}
}

// checkStop configures a plugin, opens the streams the host keeps open
// (Receive for a channel, WatchStatus) and stops it: Target.Stop's verdict.
func checkStop(ctx context.Context, tg Target) (string, error) {
	inst, d, stop, err := tg.configured(ctx)
	if err != nil {
		return "", err
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if d.Channel {
		if _, err := inst.Plugin.Receive(sctx, 16); err != nil {
			_ = stop()
			return "", fmt.Errorf("receive: %w", err)
		}
	}
	_, _, _ = inst.Plugin.WatchStatus(sctx)
	if tg.Stop == nil {
		return "stopped by the harness", nil
	}
	if err := stop(); err != nil {
		return "", fmt.Errorf("stop: %w", err)
	}
	return "exited on SIGTERM with no warning or error", nil
}

func checkListCommands(ctx context.Context, tg Target) (string, error) {
	inst, _, stop, err := tg.configured(ctx)
	if err != nil {
		return "", err
	}
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, tg.timeout())
	defer cancel()
	specs, err := inst.Plugin.ListCommands(ctx)
	if err != nil {
		return "", fmt.Errorf("list commands: %w", err)
	}
	return commandProblems(specs)
}

// commandProblems: at least one command; names and aliases lowercase,
// without the slash or spaces, unique; each described.
func commandProblems(specs []command.Spec) (string, error) {
	var p problems
	if len(specs) == 0 {
		p.addf("list commands: a command plugin lists no command")
	}
	seen := map[string]bool{}
	var names []string
	for _, s := range specs {
		names = append(names, "/"+s.Name)
		for _, n := range append([]string{s.Name}, s.Aliases...) {
			switch {
			case n == "" || strings.ContainsAny(n, " /\t\n") || n != strings.ToLower(n):
				p.addf("list commands: name %q: want a lowercase word without the slash", n)
			case seen[n]:
				p.addf("list commands: %q is listed twice", n)
			}
			seen[n] = true
		}
		if s.Description == "" {
			p.addf("list commands: /%s has no description", s.Name)
		}
	}
	return strings.Join(names, " "), p.err()
}

func checkBeforeAgentStart(ctx context.Context, tg Target) (string, error) {
	inst, _, stop, err := tg.configured(ctx)
	if err != nil {
		return "", err
	}
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, tg.timeout())
	defer cancel()
	res, err := inst.Plugin.BeforeAgentStart(ctx, hook.Request{
		Conversation: command.Conversation{SessionKey: "conformance", Instance: "conformance", Channel: "conformance", ChatType: channel.ChatDirect, ChatID: "c1"},
		Sender:       channel.Sender{ID: "u1", Name: "Conformance"},
		Message:      "hello", NewSession: true, Workspace: inst.DataDir, SessionID: "00000000-0000-4000-8000-000000000000",
	})
	var ce *channel.Error
	if errors.As(err, &ce) {
		return "answered with the error " + string(ce.Code), nil
	}
	if err != nil {
		return "", fmt.Errorf("before_agent_start: %w", err)
	}
	return fmt.Sprintf("%d bytes of context", len(res.PrependContext)), nil
}

// injected starts an instance for an inbound check, or says it is skipped.
func (tg Target) injected(ctx context.Context) (Instance, pluginclient.Description, func() error, error) {
	if tg.Inject == nil {
		return Instance{}, pluginclient.Description{}, nil, fmt.Errorf("%w: needs a way to inject inbound messages", ErrSkipped)
	}
	return tg.configured(ctx)
}

func (tg Target) inject(ctx context.Context, inst Instance, text string) (string, error) {
	chat, err := tg.Inject(ctx, inst, text)
	if err != nil {
		return "", fmt.Errorf("inject %q: %w", text, err)
	}
	return chat, nil
}

// checkReceiveAckRedeliver: an injected message arrives with its chat,
// message and sender ids, is delivered again on a new stream while unacked,
// and after an ack the next message follows.
func checkReceiveAckRedeliver(ctx context.Context, tg Target) (string, error) {
	inst, _, stop, err := tg.injected(ctx)
	if err != nil {
		return "", err
	}
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 6*tg.timeout())
	defer cancel()
	p := inst.Plugin
	sctx, end := context.WithCancel(ctx)
	defer end()
	s, err := p.Receive(sctx, 16)
	if err != nil {
		return "", fmt.Errorf("receive: %w", err)
	}
	chat, err := tg.inject(ctx, inst, "conformance one")
	if err != nil {
		return "", err
	}
	first, err := next(s, tg.timeout())
	if err != nil {
		return "", err
	}
	var pr problems
	if first.Message.Text != "conformance one" || first.Message.ChatID == "" || (chat != "" && first.Message.ChatID != chat) {
		return "", fmt.Errorf("got text %q chat %q, want %q in %q", first.Message.Text, first.Message.ChatID, "conformance one", chat)
	}
	if first.Message.MessageID == "" || first.Message.Sender.ID == "" {
		pr.addf("inbound message lacks message id or sender id: %+v", first.Message)
	}
	// Not acked: a new stream must see it again.
	end()
	_ = s.Err()
	s2, err := p.Receive(ctx, 16)
	if err != nil {
		return "", fmt.Errorf("receive again: %w", err)
	}
	again, err := next(s2, tg.timeout())
	if err != nil {
		return "", fmt.Errorf("redelivery on a new stream: %w", err)
	}
	if again.Message.MessageID != first.Message.MessageID {
		return "", fmt.Errorf("redelivery: got message %q, want %q", again.Message.MessageID, first.Message.MessageID)
	}
	if err := p.Ack(ctx, again.ID); err != nil {
		return "", fmt.Errorf("ack: %w", err)
	}
	if _, err := tg.inject(ctx, inst, "conformance two"); err != nil {
		return "", err
	}
	second, err := next(s2, tg.timeout())
	if err != nil {
		return "", fmt.Errorf("after ack: %w", err)
	}
	if second.Message.Text != "conformance two" {
		return "", fmt.Errorf("after ack got %q, want the next message", second.Message.Text)
	}
	if err := p.Ack(ctx, second.ID); err != nil {
		return "", fmt.Errorf("ack: %w", err)
	}
	return "", pr.err()
}

// nackRetry is the delay the nack check asks for.
const nackRetry = 300 * time.Millisecond

// checkNackRedeliver: a nacked delivery comes again on the same stream with
// the same id, not before the retry delay the Nack asked for. A plugin
// without Nack passes (the host then reopens the stream instead).
func checkNackRedeliver(ctx context.Context, tg Target) (string, error) {
	inst, _, stop, err := tg.injected(ctx)
	if err != nil {
		return "", err
	}
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 6*tg.timeout())
	defer cancel()
	p := inst.Plugin
	s, err := p.Receive(ctx, 16)
	if err != nil {
		return "", fmt.Errorf("receive: %w", err)
	}
	if _, err := tg.inject(ctx, inst, "conformance nack"); err != nil {
		return "", err
	}
	first, err := next(s, tg.timeout())
	if err != nil {
		return "", err
	}
	nacked := time.Now()
	if err := p.Nack(ctx, "conformance: the store is busy", nackRetry, first.ID); errors.Is(err, pluginclient.ErrUnimplemented) {
		_ = p.Ack(ctx, first.ID)
		return "Nack is not implemented: the host reopens the stream instead", nil
	} else if err != nil {
		return "", fmt.Errorf("nack: %w", err)
	}
	again, err := next(s, tg.timeout())
	if err != nil {
		return "", fmt.Errorf("after nack: %w", err)
	}
	waited := time.Since(nacked)
	if again.ID != first.ID || again.Message.MessageID != first.Message.MessageID {
		return "", fmt.Errorf("after nack got delivery %d (message %q), want %d (message %q) again", again.ID, again.Message.MessageID, first.ID, first.Message.MessageID)
	}
	if waited < nackRetry {
		return "", fmt.Errorf("a delivery nacked with retry_after %s came again after %s", nackRetry, waited.Round(time.Millisecond))
	}
	if err := p.Ack(ctx, again.ID); err != nil {
		return "", fmt.Errorf("ack: %w", err)
	}
	return fmt.Sprintf("redelivered after %s", waited.Round(time.Millisecond)), nil
}

// checkSend: a plain reply, a reply of exactly the declared text limit, a
// reply with buttons where the channel declares them, and a
// markdown reply.
func checkSend(ctx context.Context, tg Target) (string, error) {
	inst, d, stop, err := tg.injected(ctx)
	if err != nil {
		return "", err
	}
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 6*tg.timeout())
	defer cancel()
	p := inst.Plugin
	in, err := receiveOne(ctx, tg, inst, "hello")
	if err != nil {
		return "", err
	}
	chat := in.Message.ChatID
	res, err := p.Send(ctx, channel.SendRequest{ChatID: chat, ThreadID: in.Message.ThreadID, Text: "plain reply", Format: channel.FormatPlain})
	if err != nil || len(res.MessageIDs) == 0 {
		return "", fmt.Errorf("send: ids=%v err=%w", res.MessageIDs, err)
	}
	// "x" is one unit in every length unit.
	long := strings.Repeat("x", d.Capabilities.MaxTextLength)
	if _, err := p.Send(ctx, channel.SendRequest{ChatID: chat, Text: long, Format: channel.FormatPlain}); err != nil {
		return "", fmt.Errorf("send of exactly the declared limit (%d %s) failed: %w", d.Capabilities.MaxTextLength, d.Capabilities.LengthUnit, err)
	}
	if _, err := p.Send(ctx, channel.SendRequest{ChatID: chat, Text: "**bold** and `code`", Format: channel.FormatMarkdown}); err != nil {
		return "", fmt.Errorf("markdown send: %w", err)
	}
	if d.Capabilities.Buttons {
		// What the host sends for a tool approval: ids of up to 64 bytes.
		buttons := [][]channel.Button{{{ID: "ap:0123456789ab:y", Label: "Allow"}, {ID: "ap:0123456789ab:n", Label: "Deny"}},
			{{ID: strings.Repeat("b", channel.MaxButtonID), Label: "Always allow Bash here"}}}
		if _, err := p.Send(ctx, channel.SendRequest{ChatID: chat, Text: "with buttons", Format: channel.FormatPlain, Buttons: buttons}); err != nil {
			return "", fmt.Errorf("send with buttons (capability buttons): %w", err)
		}
	}
	return "", nil
}

// atLimit returns a text of exactly n units of unit made of multi-byte
// characters, so that counting in another unit gives another length: for
// UTF-16 and runes an emoji outside the BMP (2 UTF-16 units, 1 rune, 4
// bytes), for bytes "é" (2 bytes, 1 rune, 1 UTF-16 unit). An odd n of
// UTF-16 units or bytes ends with one "x". An empty unit is UTF-16.
func atLimit(unit string, n int) string {
	switch unit {
	case channel.LengthRunes:
		return strings.Repeat("😀", n)
	case channel.LengthBytes:
		return strings.Repeat("é", n/2) + strings.Repeat("x", n%2)
	}
	return strings.Repeat("😀", n/2) + strings.Repeat("x", n%2)
}

// checkTextLimit: exactly MaxTextLength units of multi-byte text (counted
// in LengthUnit) are accepted; one unit more is refused with
// CodeMessageTooLong or sent split (more than one message id), never
// accepted as one message nor failed otherwise.
func checkTextLimit(ctx context.Context, tg Target) (string, error) {
	inst, d, stop, err := tg.injected(ctx)
	if err != nil {
		return "", err
	}
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 6*tg.timeout())
	defer cancel()
	in, err := receiveOne(ctx, tg, inst, "limits")
	if err != nil {
		return "", err
	}
	chat := in.Message.ChatID
	unit, n := d.Capabilities.LengthUnit, d.Capabilities.MaxTextLength
	if unit == "" {
		unit = channel.LengthUTF16
	}
	var pr problems
	exact := atLimit(unit, n)
	if _, err := inst.Plugin.Send(ctx, channel.SendRequest{ChatID: chat, Text: exact, Format: channel.FormatPlain}); err != nil {
		pr.addf("send of exactly the declared limit (%d %s) in multi-byte characters (%d runes, %d bytes) failed: %w", n, unit, utf8.RuneCountInString(exact), len(exact), err)
	}
	res, err := inst.Plugin.Send(ctx, channel.SendRequest{ChatID: chat, Text: exact + "x", Format: channel.FormatPlain})
	switch {
	case err == nil && len(res.MessageIDs) < 2:
		pr.addf("send of one %s over the declared limit of %d was accepted as one message (ids %v): refuse it with %s or split it; is the length counted in another unit than %q?", unit, n, res.MessageIDs, channel.CodeMessageTooLong, unit)
	case err != nil && channel.CodeOf(err) != channel.CodeMessageTooLong:
		pr.addf("send of one %s over the declared limit of %d: got %v, want code %s", unit, n, err, channel.CodeMessageTooLong)
	}
	return fmt.Sprintf("%d %s", n, unit), pr.err()
}

// checkUnknownChat: Send to a chat the platform does not know fails with a
// *channel.Error of CodeChatNotFound (the host then gives up on the reply
// instead of retrying it), not with a transport error or another code.
func checkUnknownChat(ctx context.Context, tg Target) (string, error) {
	inst, _, stop, err := tg.configured(ctx)
	if err != nil {
		return "", err
	}
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, tg.timeout())
	defer cancel()
	chat := tg.UnknownChatID
	if chat == "" {
		chat = DefaultUnknownChatID
	}
	_, err = inst.Plugin.Send(ctx, channel.SendRequest{ChatID: chat, Text: "to nobody", Format: channel.FormatPlain})
	var ce *channel.Error
	if !errors.As(err, &ce) || ce.Code != channel.CodeChatNotFound {
		return "", fmt.Errorf("send to unknown chat %q: got %v, want a *channel.Error with code %s", chat, err, channel.CodeChatNotFound)
	}
	return "", nil
}

// receiveOne opens a stream, injects text and acks what arrives.
func receiveOne(ctx context.Context, tg Target, inst Instance, text string) (pluginclient.Delivery, error) {
	s, err := inst.Plugin.Receive(ctx, 16)
	if err != nil {
		return pluginclient.Delivery{}, fmt.Errorf("receive: %w", err)
	}
	if _, err := tg.inject(ctx, inst, text); err != nil {
		return pluginclient.Delivery{}, err
	}
	in, err := next(s, tg.timeout())
	if err != nil {
		return pluginclient.Delivery{}, err
	}
	if err := inst.Plugin.Ack(ctx, in.ID); err != nil {
		return pluginclient.Delivery{}, fmt.Errorf("ack: %w", err)
	}
	return in, nil
}

// absent reports whether err says "this channel does not do that": the
// unsupported code, or the call not implemented at all (the protocol's
// rule: Unimplemented means feature absent).
func absent(err error) bool {
	return channel.CodeOf(err) == channel.CodeUnsupported || errors.Is(err, pluginclient.ErrUnimplemented)
}

// checkOptionalCapabilities: typing, edit and reactions fail as absent when
// not declared, a declared Edit works on a sent message, and the plugin is
// still running after React.
func checkOptionalCapabilities(ctx context.Context, tg Target) (string, error) {
	inst, d, stop, err := tg.configured(ctx)
	if err != nil {
		return "", err
	}
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 6*tg.timeout())
	defer cancel()
	p := inst.Plugin
	var pr problems
	err = p.SetTyping(ctx, channel.TypingRequest{ChatID: "x", On: true})
	if !d.Typing && !absent(err) {
		pr.addf("SetTyping without the typing capability: got %v, want unsupported", err)
	}
	err = p.Edit(ctx, channel.EditRequest{ChatID: "x", MessageID: "1", Text: "t"})
	if !d.Edit && !absent(err) {
		pr.addf("Edit without the edit capability: got %v, want unsupported", err)
	}
	if d.Edit {
		if tg.Inject == nil {
			if len(pr) > 0 {
				return "", pr.err()
			}
			return "", fmt.Errorf("%w: checking Edit needs a way to inject inbound messages", ErrSkipped)
		}
		in, err := receiveOne(ctx, tg, inst, "edit me")
		if err != nil {
			return "", errors.Join(append(pr, err)...)
		}
		res, err := p.Send(ctx, channel.SendRequest{ChatID: in.Message.ChatID, Text: "draft", Format: channel.FormatPlain})
		if err != nil || len(res.MessageIDs) == 0 {
			return "", errors.Join(append(pr, fmt.Errorf("send: ids=%v err=%w", res.MessageIDs, err))...)
		}
		if err := p.Edit(ctx, channel.EditRequest{ChatID: in.Message.ChatID, MessageID: res.MessageIDs[0], Text: "final", Format: channel.FormatPlain}); err != nil {
			pr.addf("edit: %w", err)
		}
	}
	err = p.React(ctx, channel.ReactRequest{ChatID: "x", MessageID: "1", Emoji: "👍"})
	if !d.Reactions && !absent(err) {
		pr.addf("React without the reactions capability: got %v, want unsupported", err)
	}
	if err != nil && errors.Is(err, pluginclient.ErrPluginExited) {
		pr.addf("plugin died: %w", err)
	}
	return "", pr.err()
}

// next waits for the stream's next delivery.
func next(s *pluginclient.Stream, timeout time.Duration) (pluginclient.Delivery, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case d, ok := <-s.C:
		if !ok {
			return pluginclient.Delivery{}, fmt.Errorf("stream ended: %w", s.Err())
		}
		return d, nil
	case <-t.C:
		return pluginclient.Delivery{}, fmt.Errorf("no inbound message within %s", timeout)
	}
}

// hasErrors reports whether d holds a diagnostic that is not a warning.
func hasErrors(d schema.Diagnostics) bool {
	for _, x := range d {
		if !x.Warning {
			return true
		}
	}
	return false
}
