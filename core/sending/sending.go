// Package sending is the message_sending stage: an agent's reply, before
// it is recorded in the outbox, goes through the message_sending hook
// plugins in config order, each of which may rewrite its text, add media
// (saved in the conversation's media directory and named by MEDIA: lines,
// which delivery sends as the agent's own) or suppress it. What comes out
// is what the outbox records and sends: a recorded reply is only ever
// delivered, so a restart never asks the hooks again.
//
// A hook that fails is skipped (fail open), unless its plugin block says
// on_error = "hold" (fail closed): then the reply waits, unrecorded (its
// journal entry stays in processing), and the hook is asked again with
// backoff until it answers; the chat is told once that the answer is held.
// A host that stops meanwhile records nothing: the turn runs again after
// the restart, and its reply is held again until the hook answers.
package sending

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/internal/tstime"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/command"
	"github.com/clawhost/clawhost/sdk/hook"
)

// Hooks calls message_sending hook instances.
type Hooks interface {
	// MessageSending calls instance's hook, the call bounded by timeout;
	// ok is false when the instance is not a message_sending hook.
	MessageSending(ctx context.Context, instance string, req hook.SendingRequest, timeout time.Duration) (resp hook.SendingResponse, ok bool, err error)
	// IsSendingHook reports whether instance is a message_sending hook, or
	// may be one (it has not described itself yet). It does not block.
	IsSendingHook(instance string) bool
}

// Files saves a file a hook added to a reply of session key where
// delivery sends a MEDIA: line's file from (the session's own media
// directory), and returns its path.
type Files interface {
	SaveMedia(key sessionkey.Key, filename string, data []byte) (string, error)
}

// Settings are the stage's configuration.
type Settings struct {
	// Hooks are the enabled plugin instances in config order; those that
	// are not message_sending hooks are passed over.
	Hooks []string
	// Timeout bounds each hook's answer (messages.hook_timeout).
	Timeout time.Duration
	// Hold are the hooks whose failure holds the reply until they answer
	// (on_error = "hold"); nil: every failing hook is skipped.
	Hold map[string]bool
}

// Backoff of a held reply: the failing hook is asked again after
// FirstHoldRetry, the wait doubling up to MaxHoldRetry.
const (
	FirstHoldRetry = time.Second
	MaxHoldRetry   = 30 * time.Second
)

// Reply is a reply on its way to the outbox.
type Reply struct {
	// ID is the journal entry the reply answers (the call id).
	ID           int64
	Conversation command.Conversation
	// Key is the reply's session (Conversation.SessionKey is its stored
	// form); the hooks hear its agent.
	Key    sessionkey.Key
	Text   string
	Format channel.Format
	// VoiceNoteFormat is the channel's voice-note format
	// (channel.Capabilities.VoiceNoteFormat), handed to the hooks.
	VoiceNoteFormat string
}

// Stage is the message_sending stage.
type Stage struct {
	hooks Hooks
	files Files
	clock tstime.Clock
	log   hclog.Logger
	// held, when set, hears once per reply that a failing hook holds it.
	held func(r Reply, hook string)
	// step, when set, hears each hook's own line of what it did
	// (hook.SendingResponse.Step), by session key.
	step func(key, line string)
}

// ReportSteps makes Shape hand each hook's Step line to f (the gateway's
// /status). Call it before the first Shape.
func (s *Stage) ReportSteps(f func(key, line string)) { s.step = f }

// ReportHeld makes Shape call f once for a reply a failing on_error =
// "hold" hook holds (the gateway tells the chat). Call it before the first
// Shape.
func (s *Stage) ReportHeld(f func(r Reply, hook string)) { s.held = f }

// New returns the stage over its ports; clock times the retries of a held
// reply (nil: the real clock).
func New(hooks Hooks, files Files, clock tstime.Clock, log hclog.Logger) *Stage {
	return &Stage{hooks: hooks, files: files, clock: tstime.Or(clock), log: log.Named("message_sending")}
}

// Shape runs the hooks on r and returns the text to record: r.Text when no
// hook changed it, "" (with suppressed) when one suppressed it. A hook
// that fails or times out is skipped: the reply goes on as the previous
// hook left it; one in set.Hold is asked again, with backoff, until it
// answers (Shape blocks meanwhile: the session's next turns wait). A file a hook added that cannot be saved is left out and
// logged. ctx is the host's: a reply that ends while the host stops is
// still shaped (the calls do not end with ctx), but when a hook fails
// after ctx ended (its plugin is being stopped) Shape reports stopped and
// the reply must not be recorded unshaped: its turn runs again after the
// restart.
func (s *Stage) Shape(ctx context.Context, set Settings, r Reply) (text string, suppressed, stopped bool) {
	text = r.Text
	call := context.WithoutCancel(ctx)
	for _, inst := range set.Hooks {
		if !s.hooks.IsSendingHook(inst) {
			continue
		}
		req := hook.SendingRequest{CallID: strconv.FormatInt(r.ID, 10), Conversation: r.Conversation, Agent: r.Key.Agent, Text: text, Format: r.Format, VoiceNoteFormat: r.VoiceNoteFormat}
		resp, ok, err := s.hooks.MessageSending(call, inst, req, set.Timeout)
		if err != nil && set.Hold[inst] && ctx.Err() == nil {
			resp, ok, err = s.hold(ctx, set, r, inst, req, err)
		}
		if err != nil {
			if ctx.Err() != nil {
				return "", false, true
			}
			s.log.Warn("message_sending hook failed; skipped", "hook", inst, "session", r.Conversation.SessionKey, "id", r.ID, "error", err)
			continue
		}
		if !ok {
			continue
		}
		if line := strings.TrimSpace(resp.Step); line != "" && s.step != nil {
			s.step(r.Conversation.SessionKey, line)
		}
		if resp.Suppress {
			s.log.Info("reply suppressed by a message_sending hook", "hook", inst, "session", r.Conversation.SessionKey, "id", r.ID)
			return "", true, false
		}
		if resp.Rewrite {
			text = resp.Text
		}
		var lines []string
		for _, m := range resp.Media {
			path, err := s.files.SaveMedia(r.Key, m.Filename, m.Data)
			if err != nil {
				s.log.Warn("a file a message_sending hook added was not saved; not sent", "hook", inst, "file", m.Filename, "error", err)
				continue
			}
			lines = append(lines, "MEDIA:"+path)
		}
		if len(lines) > 0 {
			text = strings.TrimSpace(text + "\n\n" + strings.Join(lines, "\n"))
		}
	}
	return text, false, false
}

// hold asks the on_error = "hold" hook inst again, with backoff, until it
// answers or ctx ends (then err is the last failure and ctx.Err() is set);
// the chat hears once that the reply is held.
func (s *Stage) hold(ctx context.Context, set Settings, r Reply, inst string, req hook.SendingRequest, err error) (hook.SendingResponse, bool, error) {
	s.log.Warn("message_sending hook failed; the reply is held until it answers (on_error = \"hold\")", "hook", inst, "session", r.Conversation.SessionKey, "id", r.ID, "error", err)
	if s.held != nil {
		s.held(r, inst)
	}
	wait := FirstHoldRetry
	for {
		t, c := s.clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return hook.SendingResponse{}, false, err
		case <-c:
		}
		resp, ok, e := s.hooks.MessageSending(context.WithoutCancel(ctx), inst, req, set.Timeout)
		if e == nil {
			s.log.Info("message_sending hook answers again; the held reply goes on", "hook", inst, "session", r.Conversation.SessionKey, "id", r.ID)
			return resp, ok, nil
		}
		err = e
		wait = min(2*wait, MaxHoldRetry)
	}
}
