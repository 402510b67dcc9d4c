// The checks of the lifecycle hooks: message_received, message_sending
// and agent_end.

package conformance

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/command"
	"github.com/clawhost/clawhost/sdk/hook"
)

// conversation is the conversation the checks' calls come from.
var conversation = command.Conversation{SessionKey: "conformance", Instance: "conformance", Channel: "conformance", ChatType: channel.ChatDirect, ChatID: "c1"}

// errorOnly is the failure of a hook that answered the conformance call,
// an ordinary one, with an error: the host skips (or, with on_error, drops
// or holds) on every such answer, so a hook that answers only errors does
// nothing but fail.
func errorOnly(kind string, err error) error {
	return fmt.Errorf("%s: answered an ordinary call with an error (%v): a hook that answers only errors is skipped on every call", kind, err)
}

// twice calls fn twice with the same call id, each under the timeout, and
// reports a business error (the plugin's own answer) apart.
func twice[T any](ctx context.Context, tg Target, fn func(context.Context) (T, error)) (first, second T, business *channel.Error, err error) {
	for i := range 2 {
		cctx, cancel := context.WithTimeout(ctx, tg.timeout())
		v, err := fn(cctx)
		cancel()
		var ce *channel.Error
		if errors.As(err, &ce) {
			return first, second, ce, nil
		}
		if err != nil {
			if cctx.Err() != nil {
				return first, second, nil, fmt.Errorf("call %d: no answer within %s: %w", i+1, tg.timeout(), err)
			}
			return first, second, nil, fmt.Errorf("call %d: %w", i+1, err)
		}
		if i == 0 {
			first = v
		} else {
			second = v
		}
	}
	return first, second, nil, nil
}

func checkMessageReceived(ctx context.Context, tg Target) (string, error) {
	inst, _, stop, err := tg.configured(ctx)
	if err != nil {
		return "", err
	}
	defer stop()
	req := hook.ReceivedRequest{CallID: "conformance-1", Conversation: conversation, Sender: channel.Sender{ID: "u1", Name: "Conformance"},
		Text: "hello", MessageID: "m1", Timestamp: time.Now()}
	a, b, code, err := twice(ctx, tg, func(ctx context.Context) (hook.ReceivedResponse, error) { return inst.Plugin.MessageReceived(ctx, req) })
	if err != nil {
		return "", fmt.Errorf("message_received: %w", err)
	}
	if code != nil {
		return "", errorOnly("message_received", code)
	}
	var p problems
	if !reflect.DeepEqual(a, b) {
		p.addf("message_received: a repeated call id got another answer (%+v, then %+v)", a, b)
	}
	if a.Drop && strings.TrimSpace(a.DropReason) == "" {
		p.addf("message_received: dropped without a reason the sender could be told")
	}
	for _, n := range a.Notes {
		if n.Replace && n.Attachment == "" {
			p.addf("message_received: a note replaces no attachment (Replace without Attachment)")
		}
	}
	return receivedVerdict(a), p.err()
}

// receivedVerdict says what a message_received answer does.
func receivedVerdict(r hook.ReceivedResponse) string {
	switch {
	case r.Drop:
		return "drops the message"
	case r.Rewrite:
		return fmt.Sprintf("rewrites the text (%d notes)", len(r.Notes))
	case len(r.Notes) > 0:
		return fmt.Sprintf("adds %d notes", len(r.Notes))
	}
	return "passes the message"
}

func checkMessageSending(ctx context.Context, tg Target) (string, error) {
	inst, _, stop, err := tg.configured(ctx)
	if err != nil {
		return "", err
	}
	defer stop()
	req := hook.SendingRequest{CallID: "conformance-1", Conversation: conversation, Text: "Hello from the agent.", Format: channel.FormatMarkdown}
	a, b, code, err := twice(ctx, tg, func(ctx context.Context) (hook.SendingResponse, error) { return inst.Plugin.MessageSending(ctx, req) })
	if err != nil {
		return "", fmt.Errorf("message_sending: %w", err)
	}
	if code != nil {
		return "", errorOnly("message_sending", code)
	}
	var p problems
	if !reflect.DeepEqual(a, b) {
		p.addf("message_sending: a repeated call id got another answer")
	}
	for i, m := range a.Media {
		if len(m.Data) == 0 {
			p.addf("message_sending: media %d (%q) is empty", i, m.Filename)
		}
	}
	switch {
	case a.Suppress:
		return "suppresses the reply", p.err()
	case a.Rewrite:
		return fmt.Sprintf("rewrites the reply, %d media", len(a.Media)), p.err()
	}
	return fmt.Sprintf("keeps the reply, %d media", len(a.Media)), p.err()
}

func checkAgentEnd(ctx context.Context, tg Target) (string, error) {
	inst, _, stop, err := tg.configured(ctx)
	if err != nil {
		return "", err
	}
	defer stop()
	end := hook.End{CallID: "conformance-1", Conversation: conversation, Sender: channel.Sender{ID: "u1", Name: "Conformance"}, Outcome: hook.OutcomeOK,
		ReplyText: "Hello from the agent.", ToolSteps: []hook.ToolStep{{Name: "Read", Summary: "README.md"}}, Duration: 1500 * time.Millisecond}
	_, _, code, err := twice(ctx, tg, func(ctx context.Context) (struct{}, error) { return struct{}{}, inst.Plugin.AgentEnd(ctx, end) })
	if err != nil {
		return "", fmt.Errorf("agent_end: %w", err)
	}
	if code != nil {
		return "", errorOnly("agent_end", code)
	}
	return "answered twice for one call id", nil
}
