package gateway

import (
	"context"
	"time"

	"github.com/clawhost/clawhost/core/agents"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/queue"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store"
)

// Start recovers the journal. Run it after the plugin host has the
// configured instances, so recovered work finds them (they may still be
// starting: delivery waits for readiness). Inbound waits for Start, so no
// new message is accepted before recovery. Accepted messages are routed
// again, queued ones resume in their lanes, produced replies are delivered
// (the chunks not yet sent), stale replies and twice-interrupted runs are
// logged and the user is told briefly. It also starts the hourly journal
// pruning.
func (g *Gateway) Start(ctx context.Context) error {
	rec, err := g.store.Recover(ctx, store.RecoverOptions{StaleAfter: g.opts.StaleAfter})
	if err != nil {
		return err
	}
	if n := len(rec.Resume) + len(rec.Deliver) + len(rec.Stale) + len(rec.Failed); n > 0 {
		g.log.Info("resuming from the journal", "messages", len(rec.Resume), "replies_to_deliver", len(rec.Deliver), "stale_replies", len(rec.Stale), "interrupted", len(rec.Failed))
	}
	if len(rec.Parked) > 0 {
		g.log.Warn("messages parked by claude's usage limit wait for its reset", "messages", len(rec.Parked))
	}
	if err := g.pause.Start(ctx); err != nil {
		g.log.Error("reading the usage-limit pause failed; turns run", "error", err)
	}
	g.take(rec, false)
	g.replies.Resume(g.settings().Replies.AgentEnd)
	g.background(g.prune)
	close(g.ready)
	g.background(func() { g.answerApprovedHolds(g.ctx) })
	return nil
}

// Adopt takes over what hosts that died left in a shared journal (their
// host lease expired): their queued and interrupted messages, their
// replies not yet delivered. A running host calls it periodically; it
// never touches this host's own entries. It returns how many entries it
// took.
func (g *Gateway) Adopt(ctx context.Context) (int, error) {
	select {
	case <-g.ready:
	default:
		return 0, nil // Start has not recovered yet; it takes them
	}
	g.place.BeginTake()
	rec, err := g.store.Recover(ctx, store.RecoverOptions{StaleAfter: g.opts.StaleAfter, Adopt: true})
	if err != nil {
		g.resume(nil, true) // ends the take
		return 0, err
	}
	n := len(rec.Resume) + len(rec.Deliver) + len(rec.Stale) + len(rec.Failed)
	if n > 0 {
		g.log.Warn("adopting what a host that died left", "messages", len(rec.Resume), "replies_to_deliver", len(rec.Deliver), "stale_replies", len(rec.Stale), "interrupted", len(rec.Failed))
	}
	g.take(rec, true)
	return n, nil
}

// take resumes a recovery: messages back into their lanes, replies to
// deliver, stale and interrupted ones told. taken: it ends a take begun
// with beginTake (see resume).
func (g *Gateway) take(rec store.Recovery, taken bool) {
	g.resume(rec.Resume, taken)
	for _, p := range rec.Deliver {
		g.background(func() {
			m, _ := message.Decode(p.Entry.Message)
			g.delivery.DeliverPending(agents.BoundKey(g.settings().routing(), &m), p, m.Target())
		})
	}
	g.tellStale(rec.Stale)
	for _, e := range rec.Failed {
		g.log.Error("message interrupted twice; not run again", "id", e.ID, "instance", e.Instance, "chat", e.ChatID)
		if m, err := message.Decode(e.Message); err == nil {
			g.background(func() {
				// A draft the turn showed is marked as cut off, not left
				// looking like the answer.
				live, err := g.store.LiveOutput(g.ctx, e.ID)
				if err != nil {
					g.log.Warn("reading the interrupted turn's output failed", "id", e.ID, "error", err)
				}
				g.delivery.Interrupted(agents.BoundKey(g.settings().routing(), &m), m.Target(), live, noticeInterrupted)
			})
		}
	}
}

// Notices of recovery.
const (
	noticeInterrupted = "(Your last message could not be answered: the gateway restarted twice while working on it. Please send it again.)"
	noticeStale       = "(A reply to your message was produced before the gateway restarted and is now too old to deliver. Please send your message again if you still need an answer.)"
)

// tellStale tells each chat with replies too old to deliver after the
// restart, once per chat however many there were.
func (g *Gateway) tellStale(stale []store.PendingReply) {
	told := map[message.Target]bool{}
	for _, p := range stale {
		g.log.Warn("reply older than the stale bound not sent after restart", "id", p.Entry.ID, "instance", p.Entry.Instance, "chat", p.Entry.ChatID, "produced", p.Reply.ProducedAt)
		m, err := message.Decode(p.Entry.Message)
		if err != nil {
			continue
		}
		tgt := message.Target{Instance: p.Reply.Instance, ChatID: p.Reply.ChatID, ThreadID: p.Reply.ThreadID}
		if tgt.Instance == "" {
			tgt = m.Target()
		}
		if told[tgt] {
			continue
		}
		told[tgt] = true
		g.background(func() { g.delivery.Notify(agents.BoundKey(g.settings().routing(), &m), tgt, noticeStale) })
	}
}

// resume routes accepted entries again and restarts the lanes of queued
// ones (after every entry is counted). taken: the entries were just taken
// into this host's hands by a take begun with beginTake, which resume
// ends: once their sessions are known they are marked arriving until each
// has been placed (joined its session's wait, handed on, or run), so that
// a newer message of their chat does not overtake them (see settled).
func (g *Gateway) resume(entries []store.Entry, taken bool) {
	type entry struct {
		e   store.Entry
		m   message.Message
		key string
		k   sessionkey.Key // of an accepted entry
	}
	var es []entry
	for _, e := range entries {
		m, err := message.Decode(e.Message)
		if err != nil {
			g.log.Error("journal entry unreadable; marked failed", "id", e.ID, "error", err)
			g.finish(e.ID, store.StateFailed, "unreadable")
			continue
		}
		x := entry{e: e, m: m, key: e.SessionKey}
		if e.State != store.StateQueued {
			x.k = g.agents.Key(g.ctx, g.settings().routing(), &m)
			x.key = x.k.String()
		}
		es = append(es, x)
	}
	// left counts, per session, the here calls still to make: a session
	// stops arriving once its last one is made.
	own, left := 0, map[string]int{}
	var kick []string
	queued := map[string][]int64{}
	for _, x := range es {
		if x.e.State != store.StateQueued {
			left[x.key]++
			continue
		}
		if queued[x.key] == nil {
			kick = append(kick, x.key)
			left[x.key]++
		}
		queued[x.key] = append(queued[x.key], x.e.ID)
	}
	placed := func(string) {}
	if taken {
		g.place.Took(left)
		own = 1
		placed = func(k string) {
			if left[k]--; left[k] == 0 {
				g.place.Arrived(k)
			}
		}
	}
	for _, x := range es {
		if x.e.State == store.StateQueued {
			continue
		}
		g.place.Forget(x.key)
		g.submit(arrival{key: x.k, Item: queue.Item{ID: x.e.ID, Message: x.m}}, own)
		placed(x.key)
	}
	for _, k := range kick {
		ids := queued[k]
		sk := storedKey(g.log, k)
		start := func() {
			g.queue.Recovered(len(ids))
			g.queue.Kick(sk)
		}
		g.place.Forget(k)
		if g.place.Here(k, ids, start, own) {
			start()
		}
		placed(k)
	}
}

// background runs f on the gateway's wait group.
func (g *Gateway) background(f func()) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		f()
	}()
}

// prune drops finished journal entries older than Retention and audit
// rows older than audit.keep: at the start, then every hour of the clock.
func (g *Gateway) prune() {
	t, tick := g.opts.Clock.NewTicker(time.Hour)
	defer t.Stop()
	for {
		if n, err := g.store.Prune(g.ctx, g.opts.Now().Add(-g.opts.Retention)); err != nil && g.ctx.Err() == nil {
			g.log.Warn("journal prune failed", "error", err)
		} else if n > 0 {
			g.log.Debug("journal pruned", "entries", n)
		}
		if keep := g.settings().AuditKeep; keep > 0 {
			if n, err := g.store.PruneAudit(g.ctx, g.opts.Now().Add(-keep)); err != nil && g.ctx.Err() == nil {
				g.log.Warn("audit trail prune failed", "error", err)
			} else if n > 0 {
				g.log.Debug("audit trail pruned", "rows", n)
			}
		}
		select {
		case <-g.ctx.Done():
			return
		case <-tick:
		}
	}
}
