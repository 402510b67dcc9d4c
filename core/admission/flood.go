package admission

import (
	"context"
	"fmt"
	"time"

	"github.com/clawhost/clawhost/core/access"
	"github.com/clawhost/clawhost/core/store"
)

// floodLimit is the flood limit of r, the rate in force (a reload that
// changes access.rate starts every sender's bucket full).
func (s *Stage) floodLimit(r Rate) *access.Flood {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r != s.floodRate || (s.flood == nil && r.N > 0) {
		s.flood, s.floodRate = nil, r
		if r.N > 0 {
			s.flood = access.NewFlood(r.N, r.Per, s.opts.Now)
		}
	}
	return s.flood
}

// NoticeFlood tells a sender over access.rate; %s is the rate.
const NoticeFlood = "You are sending messages faster than this bot takes them (at most %s). Messages over the limit are not passed to claude — wait a moment and send again."

// flooded applies access.rate to an admitted message: a message over the
// sender's limit is not passed on, recorded in the journal as dropped
// ("rate limited"), and the sender is told once a window (that message's
// reply is the notice). It reports whether it decided e.
func (s *Stage) flooded(ctx context.Context, r Rate, e Entry) (Verdict, bool) {
	m := e.Message
	ok, tell := s.floodLimit(r).Allow(m.From)
	if ok {
		return Verdict{}, false
	}
	s.opts.Observer.Dropped(m.Instance, "rate limited")
	if !tell {
		return drop(store.StateDropped, "rate limited"), true
	}
	rate := fmt.Sprintf("%d a %s", r.N, perName(r.Per))
	s.entryLog(e).Warn("sender over access.rate; messages refused for now", "sender", m.From, "rate", rate)
	s.audit(ctx, store.AuditEvent{Kind: store.AuditRate, Actor: m.From, Instance: m.Instance, ChatID: m.ChatID, Subject: m.From, Decision: "refused",
		Detail: "over access.rate (" + rate + "); further messages in this window refused without a notice"})
	return answer(fmt.Sprintf(NoticeFlood, rate)), true
}

func perName(d time.Duration) string {
	switch d {
	case time.Second:
		return "second"
	case time.Hour:
		return "hour"
	case 24 * time.Hour:
		return "day"
	}
	return "minute"
}
