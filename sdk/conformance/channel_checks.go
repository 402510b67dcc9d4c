// The checks of a channel plugin: inbound delivery, acks and redelivery,
// sends, text limits and optional capabilities.

package conformance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/pluginclient"
)

// channelCheck is the body of a channel check: it is given an instance
// configured with Target.Config, its description, and a context of six
// Target.Timeouts (the check sends and receives several times).
type channelCheck func(ctx context.Context, tg Target, inst Instance, d pluginclient.Description) (string, error)

// inbound is the Check.Run of a channel check that needs inbound
// messages: it is skipped when the target cannot inject them.
func inbound(f channelCheck) func(context.Context, Target) (string, error) {
	return func(ctx context.Context, tg Target) (string, error) {
		if tg.Inject == nil {
			return "", fmt.Errorf("%w: needs a way to inject inbound messages", ErrSkipped)
		}
		return onChannel(f)(ctx, tg)
	}
}

// onChannel is the Check.Run of a channel check: f runs on a configured
// instance that is stopped after.
func onChannel(f channelCheck) func(context.Context, Target) (string, error) {
	return func(ctx context.Context, tg Target) (string, error) {
		inst, d, stop, err := tg.configured(ctx)
		if err != nil {
			return "", err
		}
		defer stop()
		ctx, cancel := context.WithTimeout(ctx, 6*tg.timeout())
		defer cancel()
		return f(ctx, tg, inst, d)
	}
}

func (tg Target) inject(ctx context.Context, inst Instance, text string) (string, error) {
	chat, err := tg.Inject(ctx, inst, text)
	if err != nil {
		return "", fmt.Errorf("inject %q: %w", text, err)
	}
	return chat, nil
}

// injectNext opens a stream, injects text and waits for the stream's
// next delivery; chat is the chat Target.Inject named ("" when it did
// not). The stream lives as long as ctx.
func (tg Target) injectNext(ctx context.Context, inst Instance, text string) (s *pluginclient.Stream, in pluginclient.Delivery, chat string, err error) {
	s, err = inst.Plugin.Receive(ctx, 16)
	if err != nil {
		return nil, in, "", fmt.Errorf("receive: %w", err)
	}
	if chat, err = tg.inject(ctx, inst, text); err != nil {
		return nil, in, "", err
	}
	if in, err = next(s, tg.timeout()); err != nil {
		return nil, in, "", err
	}
	return s, in, chat, nil
}

// checkReceiveAckRedeliver: an injected message arrives with its chat,
// message and sender ids, is delivered again on a new stream while unacked,
// and after an ack the next message follows.
func checkReceiveAckRedeliver(ctx context.Context, tg Target, inst Instance, _ pluginclient.Description) (string, error) {
	p := inst.Plugin
	sctx, end := context.WithCancel(ctx)
	defer end()
	// The stream ends below, the injection must not: an inject command
	// cut with it (a platform's webhook post given up) takes the unacked
	// message back, and whether the new stream saw it first was a race.
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

// checkNackRedeliver: a nacked message comes again on the same stream, not
// before the retry delay the Nack asked for: as the same delivery (the sdk
// held it: channel.Inbox.Deliver) or as a new one (the plugin offered it,
// channel.Offer, and the platform sent it again). A plugin without Nack
// passes (the host then reopens the stream instead).
func checkNackRedeliver(ctx context.Context, tg Target, inst Instance, _ pluginclient.Description) (string, error) {
	p := inst.Plugin
	s, first, _, err := tg.injectNext(ctx, inst, "conformance nack")
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
	if again.Message.MessageID != first.Message.MessageID {
		return "", fmt.Errorf("after nack got delivery %d (message %q), want message %q again", again.ID, again.Message.MessageID, first.Message.MessageID)
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
func checkSend(ctx context.Context, tg Target, inst Instance, d pluginclient.Description) (string, error) {
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
func atLimit(unit channel.LengthUnit, n int) string {
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
func checkTextLimit(ctx context.Context, tg Target, inst Instance, d pluginclient.Description) (string, error) {
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
	return tg.check(ctx, true, func(ctx context.Context, inst Instance) (string, error) {
		chat := tg.UnknownChatID
		if chat == "" {
			chat = DefaultUnknownChatID
		}
		_, err := inst.Plugin.Send(ctx, channel.SendRequest{ChatID: chat, Text: "to nobody", Format: channel.FormatPlain})
		var ce *channel.Error
		if !errors.As(err, &ce) || ce.Code != channel.CodeChatNotFound {
			return "", fmt.Errorf("send to unknown chat %q: got %v, want a *channel.Error with code %s", chat, err, channel.CodeChatNotFound)
		}
		return "", nil
	})
}

// receiveOne opens a stream, injects text and acks what arrives.
func receiveOne(ctx context.Context, tg Target, inst Instance, text string) (pluginclient.Delivery, error) {
	_, in, _, err := tg.injectNext(ctx, inst, text)
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
func checkOptionalCapabilities(ctx context.Context, tg Target, inst Instance, d pluginclient.Description) (string, error) {
	p := inst.Plugin
	var pr problems
	err := p.SetTyping(ctx, channel.TypingRequest{ChatID: "x", On: true})
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
