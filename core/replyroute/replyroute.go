// Package replyroute is the reply's route out of a turn, beside the
// arrival stages (core/admission): where a finished turn's reply goes and
// what it passes on its way to the outbox. For each reply it
//
//  1. names the reply's conversation — the instance, its channel label,
//     the chat and its type, the thread — as the hooks see it (the chat's
//     type is the message's, never read back out of the session key);
//  2. has the message_sending hooks shape it (core/sending): what they
//     return is what is recorded, and a reply the host stopped while they
//     shaped it is not recorded at all (its turn runs again);
//  3. hands it to the outbox (core/delivery records it, then sends it in
//     the session's order, to its thread, topic and reply-to);
//  4. tells the agent_end hooks of the turn once it is recorded
//     (core/agentend, in the background).
//
// The stage owns the message_sending and agent_end stages and reaches the
// plugins and the outbox through ports; it never calls the gateway, which
// hands it the turns' replies (turn.Output.Reply).
package replyroute

import (
	"context"
	"strconv"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/agentend"
	"github.com/clawhost/clawhost/core/delivery"
	"github.com/clawhost/clawhost/core/internal/tstime"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/sending"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/turn"
	sdkcommand "github.com/clawhost/clawhost/sdk/command"
	"github.com/clawhost/clawhost/sdk/hook"
)

// Hooks are the plugins' lifecycle hooks a reply passes:
// core/pluginhost.Ports implements them.
type Hooks interface {
	sending.Hooks
	agentend.Hooks
}

// Outbox records a reply and sends it; *delivery.Dispatcher implements it.
type Outbox interface {
	Deliver(r delivery.Reply)
	// Notify sends a notice outside the outbox, in session order.
	Notify(key sessionkey.Key, tgt message.Target, text string)
	// VoiceNoteFormat is the instance's voice-note format, for the hooks.
	VoiceNoteFormat(instance string) string
}

// Settings are the stage's configuration in force; the gateway passes them
// with each reply, so a reload applies to the next one.
type Settings struct {
	// Sending are the message_sending hooks, in config order, and their
	// timeout.
	Sending sending.Settings
	// AgentEnd are the agent_end hooks, in config order, and their
	// timeout.
	AgentEnd agentend.Settings
}

// Options are the stage's ports. Hooks, Files and Outbox are required.
type Options struct {
	// Ctx is the host's lifetime: a reply shaped while it ends is not
	// recorded unshaped; the agent_end events wait on it.
	Ctx    context.Context
	Logger hclog.Logger
	Clock  tstime.Clock
	Hooks  Hooks
	// Files saves the files a message_sending hook adds (core/turn).
	Files  sending.Files
	Outbox Outbox
	// Spool is where agent_end events wait for their hooks across a
	// restart (data_dir/agent-end); "": in memory only.
	Spool string
	// Background runs a notice's send on the caller's wait group.
	Background func(func())
	// OnSteps hears what a message_sending hook said it did (its Step
	// line), by session key (/status).
	OnSteps func(key, line string)
}

// NoteReplyHeld tells a chat that its answer is ready but held: a
// message_sending hook with on_error = "hold" does not answer.
const NoteReplyHeld = "⏸ Your answer is ready but held: a check it must pass before it is sent is not answering. It is sent as soon as the check is back."

// Stage is the reply's route. Route may be called concurrently for
// different sessions.
type Stage struct {
	opts    Options
	log     hclog.Logger
	sending *sending.Stage
	ends    *agentend.Notifier
}

// New returns the stage over its ports.
func New(opts Options) *Stage {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.Background == nil {
		opts.Background = func(f func()) { go f() }
	}
	s := &Stage{opts: opts, log: opts.Logger}
	s.sending = sending.New(opts.Hooks, opts.Files, opts.Clock, opts.Logger)
	if opts.OnSteps != nil {
		s.sending.ReportSteps(opts.OnSteps)
	}
	s.sending.ReportHeld(func(r sending.Reply, _ string) {
		tgt := message.Target{Instance: r.Conversation.Instance, ChatID: r.Conversation.ChatID, ThreadID: r.Conversation.ThreadID}
		opts.Background(func() { opts.Outbox.Notify(r.Key, tgt, NoteReplyHeld) })
	})
	s.ends = agentend.New(opts.Ctx, opts.Hooks, opts.Clock, opts.Logger, opts.Spool)
	return s
}

// Conversation is the reply's conversation as the hooks see it; source is
// its instance's plugin source ("telegram"), the channel label.
func Conversation(source string, r turn.Reply) sdkcommand.Conversation {
	return sdkcommand.Conversation{SessionKey: r.Key.String(), Instance: r.Target.Instance, Channel: source, ChatType: r.ChatType,
		ChatID: r.Target.ChatID, ThreadID: r.Target.ThreadID}
}

// Route takes a turn's final reply to the outbox (recorded there first),
// after the message_sending hooks shaped it: what they return is what is
// recorded, and a recorded reply is never shown to them again. The
// agent_end hooks hear of the turn once the reply is recorded, in the
// background. source is the reply's instance's plugin source.
func (s *Stage) Route(set Settings, source string, r turn.Reply) {
	conv := Conversation(source, r)
	suppressed := false
	if len(set.Sending.Hooks) > 0 && strings.TrimSpace(r.Text) != "" {
		var stopped bool
		r.Text, suppressed, stopped = s.sending.Shape(s.opts.Ctx, set.Sending, sending.Reply{ID: r.ID, Conversation: conv, Key: r.Key, Text: r.Text, Format: r.Format,
			VoiceNoteFormat: s.opts.Outbox.VoiceNoteFormat(r.Target.Instance)})
		if stopped {
			// Never recorded unshaped: the entry stays in processing and
			// its turn runs again after the restart.
			s.log.Info("the host stopped while message_sending hooks shaped a reply; not recorded, its turn runs again after the restart", "session", conv.SessionKey, "id", r.ID)
			return
		}
	}
	s.opts.Outbox.Deliver(delivery.Reply{Key: r.Key, Workspace: r.Workspace, ID: r.ID, Covers: r.Covers, Target: r.Target, Text: r.Text, Format: r.Format, ReplyTo: r.ReplyTo,
		Draft: r.Draft, Ping: r.Ping, Usage: r.Usage, ClaudeCost: r.ClaudeCost, Session: r.Session})
	if len(set.AgentEnd.Hooks) > 0 {
		s.ends.Notify(set.AgentEnd, endOf(r, conv, suppressed))
	}
}

// Resume hands the agent_end events a restart found spooled to their
// hooks (at the start).
func (s *Stage) Resume(set agentend.Settings) { s.ends.Resume(set) }

// Wait waits for the agent_end events in flight (at the stop).
func (s *Stage) Wait() { s.ends.Wait() }

// Hooked reports whether a message_sending hook may shape the replies
// (turn.Options.SendingHooked): one of hooks (the enabled instances) that
// is one, or has not described itself yet.
func (s *Stage) Hooked(hooks []string) bool {
	for _, inst := range hooks {
		if s.opts.Hooks.IsSendingHook(inst) {
			return true
		}
	}
	return false
}

// endOf describes a turn whose reply r was recorded to the agent_end hooks.
func endOf(r turn.Reply, conv sdkcommand.Conversation, suppressed bool) hook.End {
	end := hook.End{CallID: strconv.FormatInt(r.ID, 10), Conversation: conv, Sender: r.Sender, Agent: r.Key.Agent, SessionID: r.SessionID,
		ReplyText: r.Text, ToolSteps: r.Steps, Outcome: hook.OutcomeOK}
	if u := r.Usage; u != nil {
		end.InputTokens, end.OutputTokens, end.CostUSD, end.Duration = u.InputTokens+u.CacheReadTokens+u.CacheCreationTokens, u.OutputTokens, u.CostUSD, u.Duration
		if u.Outcome != "" && u.Outcome != "ok" {
			end.Outcome = hook.OutcomeError
		}
	}
	switch {
	case r.Aborted:
		end.Outcome = hook.OutcomeAborted
	case end.Outcome == hook.OutcomeOK && (suppressed || strings.TrimSpace(r.Text) == ""):
		end.Outcome = hook.OutcomeNoReply
	}
	return end
}
