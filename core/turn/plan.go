package turn

import (
	"cmp"
	"context"
	"errors"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/session"
)

// Plans. A turn plans first (claude's plan mode, runner.PlanMode) when
// its message is "/plan <text>" (the built-in, or the same at the start of
// a message), when the agent's or the chat's permission mode is "plan",
// or when it is the feedback on a plan sent back (session.PlanFeedback).
// Such a turn routes claude's questions to the chat even where the agent
// does not ask about tool use (agent.approvals): claude's ExitPlanMode is
// how the plan is shown for Approve / Keep planning (core/approval), and
// AskUserQuestion how it asks while planning. Any other tool use claude
// asks about in it is denied at once, as without approvals.

// planning reports whether the turn of m (journal entry entry) plans
// first, and whether m is the feedback on a plan sent back.
func (t *Turns) planning(set Settings, o session.Overrides, meta session.Meta, entry int64, m *message.Message) (plan, feedback bool) {
	if m == nil || m.Scheduled != "" {
		return cmp.Or(t.permissionMode(set, o), set.PermissionMode) == runner.PlanMode, false
	}
	feedback = meta.FeedbackOf(entry, m.From)
	_, cmd := session.SplitPlan(m.Command())
	return feedback || cmd || cmp.Or(t.permissionMode(set, o), set.PermissionMode) == runner.PlanMode, feedback
}

// feedbackLabel opens the prompt of a message that is the feedback on a
// plan sent back.
func feedbackLabel(m *message.Message) string {
	return "[The message below is " + senderName(m) + "'s feedback on your plan, which they sent back with \"Keep planning\". " +
		"You are in plan mode: revise the plan with this feedback and present it again with ExitPlanMode.]"
}

// keepPlanning records that the plan of the turn of entry was sent back
// by from: their next message in the chat is the feedback on it.
func (t *Turns) keepPlanning(ctx context.Context, key string, entry int64, from string) {
	_, err := t.meta().Update(ctx, t.opts.Store, key, func(m *session.Meta) error {
		m.PlanFeedback = &session.PlanFeedback{From: from, Entry: entry}
		return nil
	})
	if err != nil && !errors.Is(err, session.ErrUnchanged) {
		t.log.Warn("storing a plan sent back failed; the next message is not taken as feedback on it", "session", key, "error", err)
	}
}

// asksOnly reports whether claude's question p is asked in the chat in a
// turn that asks only because it plans (the agent does not ask about tool
// use): a plan or claude's own question; anything else is denied.
func asksOnly(p *runner.PermissionRequest) bool {
	return p.Tool == runner.ExitPlanMode || p.Tool == runner.AskUserQuestion
}
