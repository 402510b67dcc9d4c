package sdktest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/host"
	"github.com/clawhost/clawhost/sdk/schema"
)

// ConformanceConfig tells Conformance how to drive a channel plugin and the
// platform (or platform fake) behind it.
type ConformanceConfig struct {
	// New returns a fresh plugin; called once per sub-test.
	New func(t *testing.T) sdk.Plugin
	// Config is the JSON of the config {} block passed to Configure.
	Config []byte
	// Inject makes the platform produce one inbound message with the given
	// text (e.g. push an update into a fake Bot API) and returns the chat id
	// it will arrive in.
	//
	// Blocking rules: Inject is called on the test's goroutine while the
	// host side of the harness is receiving, but the harness reads the
	// message and acks it only after Inject returned. Inject must therefore
	// return once the platform has the message, without waiting for the
	// plugin to deliver it or for the host to store it: a platform call
	// that answers only after the ack (the loopback example's POST
	// /inbound) has to run on a goroutine of its own. Inject may call
	// t.Fatal; it is never called concurrently.
	Inject func(t *testing.T, text string) (chatID string)
	// UnknownChatID is a chat id the platform does not know; Send to it
	// must fail with channel.CodeChatNotFound. Empty means
	// "clawhost-conformance-unknown-chat".
	UnknownChatID string
	// Timeout bounds each step; zero means 10s.
	Timeout time.Duration
}

// Conformance runs the behaviour every channel plugin owes the host:
// describe/schema sanity, configure, inbound delivery with host acks,
// redelivery of unacked messages on a new stream, sends up to the declared
// text limit, multi-byte text at that limit counted in the declared unit
// (accepted at the limit, refused or split one unit above it), a typed
// chat_not_found for an unknown chat, and typed errors for optional
// capabilities it lacks.
func Conformance(t *testing.T, cc ConformanceConfig) {
	c := conformance{cc: cc, timeout: cc.Timeout}
	if c.timeout == 0 {
		c.timeout = 10 * time.Second
	}
	if c.cc.UnknownChatID == "" {
		c.cc.UnknownChatID = "clawhost-conformance-unknown-chat"
	}
	t.Run("describe", c.describe)
	t.Run("receive_ack_redeliver", c.receiveAckRedeliver)
	t.Run("send", c.send)
	t.Run("text_limit", c.textLimit)
	t.Run("unknown_chat", c.unknownChat)
	t.Run("optional_capabilities", c.optionalCapabilities)
}

// conformance holds one Conformance run's config; each check is a method run
// as its own sub-test.
type conformance struct {
	cc      ConformanceConfig
	timeout time.Duration // per step
}

// setup starts a fresh plugin, describes and configures it, and returns it with
// its description and a context bounding the sub-test.
func (c conformance) setup(t *testing.T) (*host.Plugin, host.Description, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 6*c.timeout)
	t.Cleanup(cancel)
	// The data dir is made before Start so that cleanup (LIFO) stops the
	// plugin before its directory is removed.
	dataDir := t.TempDir()
	h := Start(t, c.cc.New(t))
	d, err := h.Plugin.Describe(ctx)
	if err != nil {
		t.Fatalf("describe: %v", err)
	}
	if diags, err := h.Plugin.Configure(ctx, schema.Config{Instance: "conformance", JSON: c.cc.Config, DataDir: dataDir}); err != nil || len(diags) > 0 {
		t.Fatalf("configure: err=%v diags=%v", err, diags)
	}
	return h.Plugin, d, ctx
}

// describe checks Describe and ConfigSchema: a named channel plugin with a
// positive text limit and uniquely named, described config attributes.
func (c conformance) describe(t *testing.T) {
	h := Start(t, c.cc.New(t))
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	d, err := h.Plugin.Describe(ctx)
	if err != nil {
		t.Fatalf("describe: %v", err)
	}
	if !d.Channel {
		t.Fatalf("describe: plugin %q does not offer a channel", d.Name)
	}
	if d.Name == "" {
		t.Errorf("describe: empty name")
	}
	if d.Capabilities.MaxTextLength <= 0 {
		t.Errorf("capabilities: max text length %d", d.Capabilities.MaxTextLength)
	}
	s, err := h.Plugin.ConfigSchema(ctx)
	if err != nil {
		t.Fatalf("config schema: %v", err)
	}
	seen := map[string]bool{}
	for _, a := range s {
		if a.Name == "" || seen[a.Name] {
			t.Errorf("config schema: empty or duplicate attribute name %q", a.Name)
		}
		seen[a.Name] = true
		if a.Description == "" {
			t.Errorf("config schema: attribute %q has no description", a.Name)
		}
	}
}

// receiveAckRedeliver checks inbound delivery: an injected message arrives with
// its chat, message and sender ids, is delivered again on a new stream while
// unacked, and after an ack the next message follows.
func (c conformance) receiveAckRedeliver(t *testing.T) {
	p, _, ctx := c.setup(t)
	sctx, stop := context.WithCancel(ctx)
	s, err := p.Receive(sctx, 16)
	if err != nil {
		t.Fatalf("receive: %v", err)
	}
	chat := c.cc.Inject(t, "conformance one")
	first := next(t, s, c.timeout)
	if first.Message.Text != "conformance one" || first.Message.ChatID != chat {
		t.Fatalf("got text %q chat %q, want %q in %q", first.Message.Text, first.Message.ChatID, "conformance one", chat)
	}
	if first.Message.MessageID == "" || first.Message.Sender.ID == "" {
		t.Errorf("inbound message lacks message id or sender id: %+v", first.Message)
	}
	// Not acked: a new stream must see it again.
	stop()
	_ = s.Err()
	s2, err := p.Receive(ctx, 16)
	if err != nil {
		t.Fatalf("receive again: %v", err)
	}
	again := next(t, s2, c.timeout)
	if again.Message.MessageID != first.Message.MessageID {
		t.Fatalf("redelivery: got message %q, want %q", again.Message.MessageID, first.Message.MessageID)
	}
	if err := p.Ack(ctx, again.ID); err != nil {
		t.Fatalf("ack: %v", err)
	}
	c.cc.Inject(t, "conformance two")
	second := next(t, s2, c.timeout)
	if second.Message.Text != "conformance two" {
		t.Fatalf("after ack got %q, want the next message", second.Message.Text)
	}
	if err := p.Ack(ctx, second.ID); err != nil {
		t.Fatalf("ack: %v", err)
	}
}

// send checks a plain reply, a reply of exactly the declared text limit and a
// markdown reply.
func (c conformance) send(t *testing.T) {
	p, d, ctx := c.setup(t)
	s, err := p.Receive(ctx, 16)
	if err != nil {
		t.Fatalf("receive: %v", err)
	}
	chat := c.cc.Inject(t, "hello")
	in := next(t, s, c.timeout)
	_ = p.Ack(ctx, in.ID)
	res, err := p.Send(ctx, channel.SendRequest{ChatID: chat, ThreadID: in.Message.ThreadID, Text: "plain reply", Format: channel.FormatPlain})
	if err != nil || len(res.MessageIDs) == 0 {
		t.Fatalf("send: ids=%v err=%v", res.MessageIDs, err)
	}
	// "x" is one unit in every length unit.
	long := strings.Repeat("x", d.Capabilities.MaxTextLength)
	if _, err := p.Send(ctx, channel.SendRequest{ChatID: chat, Text: long, Format: channel.FormatPlain}); err != nil {
		t.Fatalf("send of exactly the declared limit (%d %s) failed: %v", d.Capabilities.MaxTextLength, d.Capabilities.LengthUnit, err)
	}
	_, err = p.Send(ctx, channel.SendRequest{ChatID: chat, Text: "**bold** and `code`", Format: channel.FormatMarkdown})
	if err != nil {
		t.Fatalf("markdown send: %v", err)
	}
}

// atLimit returns a text of exactly n units of unit made of multi-byte
// characters, so that counting in another unit gives another length: for
// UTF-16 and runes an emoji outside the BMP (2 UTF-16 units, 1 rune, 4
// bytes), for bytes "é" (2 bytes, 1 rune, 1 UTF-16 unit). An odd n of
// UTF-16 units or bytes ends with one "x".
func atLimit(unit string, n int) string {
	switch unit {
	case channel.LengthRunes:
		return strings.Repeat("😀", n)
	case channel.LengthBytes:
		return strings.Repeat("é", n/2) + strings.Repeat("x", n%2)
	}
	return strings.Repeat("😀", n/2) + strings.Repeat("x", n%2)
}

// textLimit checks the declared limit with multi-byte text: exactly
// MaxTextLength units (counted in LengthUnit) are accepted; one unit more
// is refused with CodeMessageTooLong or sent split (more than one message
// id), never accepted as one message nor failed otherwise.
func (c conformance) textLimit(t *testing.T) {
	p, d, ctx := c.setup(t)
	s, err := p.Receive(ctx, 16)
	if err != nil {
		t.Fatalf("receive: %v", err)
	}
	chat := c.cc.Inject(t, "limits")
	in := next(t, s, c.timeout)
	_ = p.Ack(ctx, in.ID)
	unit, n := d.Capabilities.LengthUnit, d.Capabilities.MaxTextLength
	if unit == "" {
		unit = channel.LengthUTF16
	}
	exact := atLimit(unit, n)
	if _, err := p.Send(ctx, channel.SendRequest{ChatID: chat, Text: exact, Format: channel.FormatPlain}); err != nil {
		t.Errorf("send of exactly the declared limit (%d %s) in multi-byte characters (%d runes, %d bytes) failed: %v", n, unit, utf8.RuneCountInString(exact), len(exact), err)
	}
	res, err := p.Send(ctx, channel.SendRequest{ChatID: chat, Text: exact + "x", Format: channel.FormatPlain})
	switch {
	case err == nil && len(res.MessageIDs) < 2:
		t.Errorf("send of one %s over the declared limit of %d was accepted as one message (ids %v): refuse it with %s or split it; is the length counted in another unit than %q?", unit, n, res.MessageIDs, channel.CodeMessageTooLong, unit)
	case err != nil && channel.CodeOf(err) != channel.CodeMessageTooLong:
		t.Errorf("send of one %s over the declared limit of %d: got %v, want code %s", unit, n, err, channel.CodeMessageTooLong)
	}
}

// unknownChat checks that Send to a chat the platform does not know fails
// with a *channel.Error of CodeChatNotFound (the host then stops retrying
// and drops the reply), not with a transport error or another code.
func (c conformance) unknownChat(t *testing.T) {
	p, _, ctx := c.setup(t)
	_, err := p.Send(ctx, channel.SendRequest{ChatID: c.cc.UnknownChatID, Text: "to nobody", Format: channel.FormatPlain})
	var ce *channel.Error
	if !errors.As(err, &ce) || ce.Code != channel.CodeChatNotFound {
		t.Errorf("send to unknown chat %q: got %v, want a *channel.Error with code %s", c.cc.UnknownChatID, err, channel.CodeChatNotFound)
	}
}

// optionalCapabilities checks that typing, edit and reactions fail with
// CodeUnsupported when not declared, that a declared Edit works on a sent
// message, and that the plugin is still running after React.
func (c conformance) optionalCapabilities(t *testing.T) {
	p, d, ctx := c.setup(t)
	err := p.SetTyping(ctx, channel.TypingRequest{ChatID: "x", On: true})
	if !d.Typing && channel.CodeOf(err) != channel.CodeUnsupported {
		t.Errorf("SetTyping without Typer: got %v, want unsupported", err)
	}
	err = p.Edit(ctx, channel.EditRequest{ChatID: "x", MessageID: "1", Text: "t"})
	if !d.Edit && channel.CodeOf(err) != channel.CodeUnsupported {
		t.Errorf("Edit without Editor: got %v, want unsupported", err)
	}
	if d.Edit {
		s, err := p.Receive(ctx, 16)
		if err != nil {
			t.Fatalf("receive: %v", err)
		}
		chat := c.cc.Inject(t, "edit me")
		in := next(t, s, c.timeout)
		_ = p.Ack(ctx, in.ID)
		res, err := p.Send(ctx, channel.SendRequest{ChatID: chat, Text: "draft", Format: channel.FormatPlain})
		if err != nil {
			t.Fatalf("send: %v", err)
		}
		if err := p.Edit(ctx, channel.EditRequest{ChatID: chat, MessageID: res.MessageIDs[0], Text: "final", Format: channel.FormatPlain}); err != nil {
			t.Fatalf("edit: %v", err)
		}
	}
	err = p.React(ctx, channel.ReactRequest{ChatID: "x", MessageID: "1", Emoji: "👍"})
	if !d.Reactions && channel.CodeOf(err) != channel.CodeUnsupported {
		t.Errorf("React without Reactor: got %v, want unsupported", err)
	}
	if err != nil && errors.Is(err, host.ErrPluginExited) {
		t.Fatalf("plugin died: %v", err)
	}
}

func next(t *testing.T, s *host.Stream, timeout time.Duration) host.Delivery {
	t.Helper()
	select {
	case d, ok := <-s.C:
		if !ok {
			t.Fatalf("stream ended: %v", s.Err())
		}
		return d
	case <-time.After(timeout):
		t.Fatalf("no inbound message within %s", timeout)
	}
	return host.Delivery{}
}
