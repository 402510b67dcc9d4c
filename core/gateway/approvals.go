package gateway

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/clawhost/clawhost/core/approval"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/turn"
)

// asker is the turn's view of the approvals.
type asker struct{ g *Gateway }

func (k asker) Ask(ctx context.Context, key sessionkey.Key, tgt message.Target, from *message.Message, req *runner.PermissionRequest, card turn.QuestionCard) (runner.Decision, string) {
	q := approval.Question{Key: key, Target: tgt, Request: req}
	if card != nil {
		q.Card = card
	}
	if from != nil {
		set := k.g.settings()
		q.Asker, q.AskerName, q.AskerOwner = from.From, from.Sender.Name, set.Access.IsOwner(from)
	}
	o := k.g.approvals.Ask(ctx, q)
	if o.KeepPlanning {
		return o.Decision, o.ByID
	}
	return o.Decision, ""
}

func (k asker) Auto(key sessionkey.Key, req *runner.PermissionRequest, rule runner.Rule) {
	k.g.approvals.Auto(key, req, rule)
}

// approvalConfig is the approvals' settings: set.Approval with the owners
// of set.Access.
func approvalConfig(set Settings) approval.Config {
	c := set.Approval
	c.Owners = set.Access.Owners
	return c
}

// approvalLines are /status's lines about a session's tool-use questions:
// the open one and the last decisions.
func approvalLines(approvals *approval.Approvals, now time.Time, key sessionkey.Key) []string {
	var out []string
	for _, v := range approvals.Open() {
		if v.Key == key.String() {
			out = append(out, fmt.Sprintf("Waiting for approval: %s (%s), asked %s ago", v.Tool, firstLine(v.Summary), now.Sub(v.Since).Round(time.Second)))
		}
	}
	for _, r := range approvals.Recent(key, 3) {
		verb := "denied"
		switch {
		case r.Always:
			verb = "always allowed"
		case r.Allow:
			verb = "allowed"
		}
		out = append(out, fmt.Sprintf("Approval: %s (%s) %s by %s, %s ago", r.Tool, firstLine(r.Summary), verb, r.By, now.Sub(r.At).Round(time.Second)))
	}
	return out
}

// Approvals are the open tool-use questions and the last decisions, for
// the status page.
func (g *Gateway) Approvals() (open []approval.View, recent []approval.Record) {
	return g.approvals.Open(), g.approvals.Recent(sessionkey.Key{}, 10)
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	if r := []rune(l); len(r) > 60 {
		l = string(r[:59]) + "…"
	}
	return l
}

// DecideApproval answers a waiting tool-use question from the status page:
// the chat is told by, the audit trail records the page's actor, "admin".
func (g *Gateway) DecideApproval(id string, allow bool, by string) bool {
	return g.approvals.Decide(id, allow, by, "admin")
}

// StopSession stops session key's running turn and drops its waiting
// messages, as /stop does (the status page's Stop); it reports whether
// there was anything to stop.
func (g *Gateway) StopSession(key sessionkey.Key) bool {
	aborted, dropped := sessions{g}.Stop(key)
	return aborted || dropped > 0
}
