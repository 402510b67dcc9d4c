// Package received is the message_received stage: between access control
// and the queue it asks the message_received hook plugins, in config
// order, about an inbound message, applies what they answer (a rewritten
// text, notes such as a voice note's transcript, a drop with a reason the
// sender is told) and records the outcome with the message's journal entry
// before anyone acts on it, so that a restart resumes with the decision
// and never asks a hook twice for the same message.
//
// The stage owns its ports ([Hooks], [Media], [Journal]) and returns a
// [Verdict]; it never calls the gateway, so it can move to wherever
// admission ends up.
package received

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/sdk/hook"
)

// Hooks calls message_received hook instances.
type Hooks interface {
	// MessageReceived calls instance's hook, the call bounded by timeout.
	// ok is false when the instance is not a message_received hook (it is
	// then not asked and not failed).
	MessageReceived(ctx context.Context, instance string, req hook.ReceivedRequest, timeout time.Duration) (resp hook.ReceivedResponse, ok bool, err error)
	// IsReceivedHook reports whether instance is a message_received hook,
	// or may be one (it has not described itself yet). It does not block.
	IsReceivedHook(instance string) bool
}

// Media downloads a message's attachments onto the host (message.Media's
// Path set for each one that downloaded).
type Media interface {
	FetchMedia(ctx context.Context, key sessionkey.Key, m *message.Message, id int64)
}

// Journal records the decision: the message, re-encoded, replaces the
// accepted entry's (store.Journal.Amend).
type Journal interface {
	Amend(ctx context.Context, id int64, message []byte) error
}

// Hook is one message_received instance in config order.
type Hook struct {
	Instance string
	// Drop: a failure of this hook drops the message (on_error = "drop");
	// otherwise the hook is skipped.
	Drop bool
}

// Settings are the stage's configuration; the gateway maps them from HCL.
type Settings struct {
	// Hooks are the enabled plugin instances in config order; those that
	// are not message_received hooks are passed over.
	Hooks []Hook
	// Timeout bounds each hook's answer (messages.hook_timeout).
	Timeout time.Duration
}

// Stage is the message_received stage.
type Stage struct {
	hooks   Hooks
	media   Media
	journal Journal
	log     hclog.Logger
}

// New returns the stage over its ports.
func New(hooks Hooks, media Media, journal Journal, log hclog.Logger) *Stage {
	return &Stage{hooks: hooks, media: media, journal: journal, log: log.Named("message_received")}
}

// Verdict is what the stage decided for a message.
type Verdict struct {
	// Drop: the message does not go to the queue; Reason is what the
	// sender is told.
	Drop   bool
	Reason string
	// Stopped: the host is stopping; nothing was recorded and the message
	// stays in the journal as accepted (the next start decides).
	Stopped bool
}

// DefaultDropReason is told to the sender of a message a hook dropped
// without a reason.
const DefaultDropReason = "Your message was not passed to the agent."

// FailedDropReason is told to the sender of a message a failing hook with
// on_error = "drop" dropped.
const FailedDropReason = "Your message could not be handled right now. Please try again later."

// Applies reports whether the stage looks at m: a message with text or
// attachments a person wrote, not a command ("/…") nor a button press,
// which the host answers itself.
func Applies(m *message.Message) bool {
	return m.Action == nil && m.Scheduled == "" && !strings.HasPrefix(m.Command(), "/")
}

// Decide asks the hooks about the message of journal entry id (session
// key), unless its decision is already recorded (a restart): then it
// returns that one without asking. It changes m as the hooks answered and
// records it with the entry (Journal.Amend) before it returns. Without
// hooks it does nothing. A record that fails is logged; the decision
// stands for this run.
func (s *Stage) Decide(ctx context.Context, set Settings, id int64, skey sessionkey.Key, m *message.Message) Verdict {
	key := skey.String()
	if r := m.Received; r != nil {
		return Verdict{Drop: r.Dropped, Reason: r.Reason}
	}
	if len(set.Hooks) == 0 || !Applies(m) {
		return Verdict{}
	}
	var hooks []Hook
	for _, h := range set.Hooks {
		if s.hooks.IsReceivedHook(h.Instance) {
			hooks = append(hooks, h)
		}
	}
	if len(hooks) == 0 {
		// Nothing to ask, nothing to record.
		return Verdict{}
	}
	if len(m.Media) > 0 && s.media != nil {
		s.media.FetchMedia(ctx, skey, m, id)
	}
	rec := &message.Received{}
	for _, h := range hooks {
		resp, ok, err := s.hooks.MessageReceived(ctx, h.Instance, request(id, key, m), set.Timeout)
		if err == nil && !ok {
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				// The host stops: nothing recorded, the next start asks.
				return Verdict{Stopped: true}
			}
			if h.Drop {
				s.log.Warn("message_received hook failed; message dropped (on_error = \"drop\")", "hook", h.Instance, "session", key, "id", id, "error", err)
				rec.Dropped, rec.Reason = true, FailedDropReason
				break
			}
			s.log.Warn("message_received hook failed; skipped", "hook", h.Instance, "session", key, "id", id, "error", err)
			continue
		}
		rec.Hooks = append(rec.Hooks, h.Instance)
		if step := strings.TrimSpace(resp.Step); step != "" {
			rec.Steps = append(rec.Steps, step)
		}
		if resp.Drop {
			rec.Dropped, rec.Reason = true, strings.TrimSpace(resp.DropReason)
			if rec.Reason == "" {
				rec.Reason = DefaultDropReason
			}
			s.log.Info("message dropped by a message_received hook", "hook", h.Instance, "session", key, "id", id)
			break
		}
		apply(m, resp)
	}
	m.Received = rec
	if err := s.journal.Amend(ctx, id, message.Encode(m)); err != nil && ctx.Err() == nil {
		s.log.Error("recording the message_received decision failed; a restart may ask the hooks again", "id", id, "error", err)
	}
	return Verdict{Drop: rec.Dropped, Reason: rec.Reason}
}

// request describes m to a hook.
func request(id int64, key string, m *message.Message) hook.ReceivedRequest {
	req := hook.ReceivedRequest{CallID: strconv.FormatInt(id, 10), Conversation: m.Conversation(key), Sender: m.Sender, Text: m.Body, MessageID: m.MessageID, Timestamp: m.Timestamp}
	for _, md := range m.Media {
		if md.Path != "" {
			req.Attachments = append(req.Attachments, hook.Attachment{Kind: md.Kind, Path: absPath(md.Path), MIME: md.MIME, Filename: md.Filename, Size: md.Size})
		}
	}
	return req
}

// apply changes m as a hook answered: the text rewritten, then the notes
// appended to it (a note that replaces its attachment removes it).
func apply(m *message.Message, r hook.ReceivedResponse) {
	if r.Rewrite {
		m.Body, m.CommandBody = r.Text, ""
	}
	for _, n := range r.Notes {
		text := strings.TrimSpace(n.Text)
		if text == "" {
			continue
		}
		label := strings.TrimSpace(n.Label)
		if label == "" {
			label = "Note"
		}
		block := "[" + label + "]\n" + text
		if strings.TrimSpace(m.Body) == "" {
			m.Body = block
		} else {
			m.Body += "\n\n" + block
		}
		m.CommandBody = ""
		if n.Replace && n.Attachment != "" {
			keep := m.Media[:0]
			for _, md := range m.Media {
				if md.Path == "" || absPath(md.Path) != n.Attachment {
					keep = append(keep, md)
				}
			}
			m.Media = keep
		}
	}
}

// absPath is p made absolute.
func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}
