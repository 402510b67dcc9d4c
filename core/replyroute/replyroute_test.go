package replyroute

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/agentend"
	"github.com/clawhost/clawhost/core/delivery"
	"github.com/clawhost/clawhost/core/internal/tstime/tstimetest"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/sending"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/turn"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/hook"
)

// hooks records the hook calls; the "gate" message_sending hook answers
// with resp (or err), the "end" agent_end hook records the events.
type hooks struct {
	mu   sync.Mutex
	resp hook.SendingResponse
	err  error
	seen []hook.SendingRequest
	ends chan hook.End
}

func (h *hooks) MessageSending(_ context.Context, inst string, req hook.SendingRequest, _ time.Duration) (hook.SendingResponse, bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seen = append(h.seen, req)
	return h.resp, inst == "gate", h.err
}
func (h *hooks) IsSendingHook(inst string) bool { return inst == "gate" }
func (h *hooks) AgentEnd(_ context.Context, inst string, end hook.End, _ time.Duration) (bool, error) {
	if inst != "end" {
		return false, nil
	}
	h.ends <- end
	return true, nil
}
func (h *hooks) IsEndHook(inst string) bool { return inst == "end" }

// outbox records what was delivered.
type outbox struct {
	mu      sync.Mutex
	replies []delivery.Reply
}

func (o *outbox) Deliver(r delivery.Reply) {
	o.mu.Lock()
	o.replies = append(o.replies, r)
	o.mu.Unlock()
}
func (o *outbox) Notify(sessionkey.Key, message.Target, string) {}
func (o *outbox) VoiceNoteFormat(string) string                 { return "ogg" }

type files struct{}

func (files) SaveMedia(sessionkey.Key, string, []byte) (string, error) { return "", nil }

var key = sessionkey.Key{Agent: "ops", Chat: "main"} // a group sharing the main session

func reply(text string) turn.Reply {
	return turn.Reply{Key: key, ID: 7, Target: message.Target{Instance: "tg", ChatID: "-100", ThreadID: "3"}, ChatType: channel.ChatGroup, Text: text, Format: channel.FormatMarkdown}
}

// TestRoute: the hooks see the reply's conversation (its chat type the
// message's, though the key names none), what they return is recorded,
// a suppressed reply is recorded empty and told to agent_end as no reply,
// and a reply the host stopped while a hook failed is not recorded.
func TestRoute(t *testing.T) {
	t.Parallel()
	set := Settings{Sending: sending.Settings{Hooks: []string{"gate"}, Timeout: time.Second}, AgentEnd: agentend.Settings{Hooks: []string{"end"}, Timeout: time.Second}}
	cases := []struct {
		name     string
		resp     hook.SendingResponse
		err      error
		stopped  bool
		recorded string // "-" none
		outcome  hook.Outcome
	}{
		{name: "unchanged", recorded: "hello", outcome: hook.OutcomeOK},
		{name: "rewritten", resp: hook.SendingResponse{Rewrite: true, Text: "HELLO"}, recorded: "HELLO", outcome: hook.OutcomeOK},
		{name: "suppressed", resp: hook.SendingResponse{Suppress: true}, recorded: "", outcome: hook.OutcomeNoReply},
		{name: "stopped", err: context.Canceled, stopped: true, recorded: "-"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			h := &hooks{resp: c.resp, err: c.err, ends: make(chan hook.End, 1)}
			out := &outbox{}
			s := New(Options{Ctx: ctx, Clock: tstimetest.NewFake(time.Unix(0, 0)), Hooks: h, Files: files{}, Outbox: out})
			run := set
			if c.stopped {
				run.Sending.Hold = map[string]bool{"gate": true}
				cancel()
			}
			s.Route(run, "telegram", reply("hello"))
			if len(h.seen) != 1 {
				t.Fatalf("the hook saw %d replies", len(h.seen))
			}
			conv := h.seen[0].Conversation
			if conv.ChatType != channel.ChatGroup || conv.Channel != "telegram" || conv.ThreadID != "3" || conv.SessionKey != key.String() || h.seen[0].Agent != "ops" || h.seen[0].VoiceNoteFormat != "ogg" {
				t.Errorf("the hook saw %+v (agent %q)", conv, h.seen[0].Agent)
			}
			if c.recorded == "-" {
				if len(out.replies) != 0 {
					t.Fatalf("recorded %+v while the host stopped", out.replies)
				}
				return
			}
			if len(out.replies) != 1 || out.replies[0].Text != c.recorded || out.replies[0].Key != key || out.replies[0].Target.ThreadID != "3" {
				t.Fatalf("recorded %+v, want %q", out.replies, c.recorded)
			}
			select {
			case end := <-h.ends:
				if end.Outcome != c.outcome || end.Conversation.ChatType != channel.ChatGroup || end.Agent != "ops" {
					t.Errorf("agent_end heard %+v, want outcome %q", end, c.outcome)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("agent_end never heard of the turn")
			}
			s.Wait()
		})
	}
}
