package gateway

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/clawhost/clawhost/core/admission"
	"github.com/clawhost/clawhost/core/command"
	"github.com/clawhost/clawhost/core/debounce"
	"github.com/clawhost/clawhost/core/delivery"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/queue"
	"github.com/clawhost/clawhost/core/session"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/sessionreset"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/turn"
	"github.com/clawhost/clawhost/sdk/channel"
)

// submit hands an accepted entry to the arrival stage of its conversation.
// With several hosts, the host that runs the session does: the entry is
// handed to it when that is another. own is 0 for a new entry; for one a
// take of this host's resumes, the takes of a's session the caller is part
// of (see placer.here).
func (g *Gateway) submit(a arrival, own int) {
	run := func() { g.arrivals.Do(a.key, func() { g.arrive(a) }) }
	if g.place.Here(a.key.String(), []int64{a.ID}, run, own) {
		run()
	}
}

// finish moves entries to a terminal state, logging a failure.
func (g *Gateway) finish(id int64, state store.State, reason string) {
	if err := g.store.Finish(g.ctx, store.FinishRequest{IDs: []int64{id}, State: state, Reason: reason}); err != nil && g.ctx.Err() == nil {
		g.log.Error("journal finish failed", "id", id, "state", state, "error", err)
	}
}

// arrive is the arrival stage, serialized per conversation: the admission
// stage's verdict, then debounce.
func (g *Gateway) arrive(a arrival) {
	if g.ctx.Err() != nil {
		return // stays in the journal as accepted; the next start routes it
	}
	set := g.settings()
	v := g.admission.Decide(g.ctx, set.admission(), admission.Entry{ID: a.ID, Key: a.key, Message: &a.Message})
	switch v.Kind {
	case admission.Pass:
		if v.Amended {
			// The journal holds the decided message now: the turn reads it.
			a.Raw = message.Encode(&a.Message)
			stored := a.Message
			stored.V = message.Version
			a.Journaled = &stored
		}
		g.debouncer(set, a.Message.Instance).Enqueue(a)
	case admission.Run:
		g.queue.Enqueue(a.key, []queue.Item{a.Item})
	case admission.Answer:
		g.respond(a, v.Text)
	case admission.Hold:
		g.holds.hold(a, v.Code)
		g.holds.tellOwners(set, &a.Message, v.Code)
		g.respond(a, v.Text)
	case admission.Drop:
		g.finish(a.ID, v.State, v.Reason)
	case admission.Leave:
		// Stays accepted: the next start decides it again.
	}
}

// debouncer returns the debouncer for an instance's delay. Commands and
// media are not held: they flush the window and pass at once.
func (g *Gateway) debouncer(set Settings, instance string) *debounce.Debouncer[arrival] {
	delay := debounce.Resolve(nil, set.Debounce, instance)
	g.mu.Lock()
	defer g.mu.Unlock()
	d := g.debouncers[delay]
	if d == nil {
		d = debounce.New(debounce.Config[arrival]{
			Delay: delay,
			Clock: g.opts.Clock,
			Key:   func(a arrival) string { return a.key.String() },
			ShouldDebounce: func(a arrival) bool {
				return len(a.Message.Media) == 0 && !strings.HasPrefix(a.Message.Command(), "/")
			},
			Flush: g.route,
		})
		g.debouncers[delay] = d
	}
	return d
}

// route handles a batch (one message, or several a debounce window merged,
// all of one session): reset triggers, built-in and plugin commands, abort
// words; everything else goes to the session's queue.
func (g *Gateway) route(_ string, batch []arrival) {
	if g.ctx.Err() != nil {
		return
	}
	head := batch[0]
	key := head.key
	text := head.Message.Command()
	if inline := g.inlineDirectives(batch); len(batch) == 1 && !inline {
		set := g.settings()
		control := set.Access.MayControl(&head.Message)
		v := sessionreset.Decide(g.turns.MatchTrigger(text), control, g.turns.Profile(key.Agent).Models)
		if v.Action == sessionreset.Refuse {
			g.respond(head, v.Answer)
			return
		} else if v.Action == sessionreset.Reset {
			g.resetSession(key, &head.Message, "trigger "+v.Trigger)
			if v.Model != "" {
				// "/new sonnet [text]": the new session runs on that model.
				if _, err := g.turns.SetOverrides(g.ctx, head.key, func(o *session.Overrides) error { o.Model = v.Model; return nil }); err != nil {
					g.log.Error("storing the model of /new failed", "session", key.String(), "error", err)
				}
			}
			if v.Answer != "" {
				g.respond(head, v.Answer)
				return
			}
			// The payload becomes the first message of the new session; the
			// turn strips the trigger again when it builds the prompt.
		} else if inv, ok := g.handler.Resolve(g.ctx, text); ok && (inv.Builtin() || g.opts.Ports.Known(inv.Instance)) {
			// /compact is a turn of the session, in order with its
			// messages; the others are answered at once. A plugin command
			// whose instance was just removed (a reload not yet reflected
			// in the registry) goes to the agent.
			if inv.Builtin() && inv.Name == "compact" && control {
				g.queue.Enqueue(key, []queue.Item{head.Item})
				return
			}
			if _, plan := session.SplitPlan(text); plan && inv.Builtin() && inv.Name == session.PlanCommand {
				// "/plan text" is a turn in plan mode, in order with the
				// session's messages.
				g.queue.Enqueue(key, []queue.Item{head.Item})
				return
			}
			g.command(head, inv)
			return
		} else if answer := g.claude.Answer(head.key.Agent, text); answer != "" {
			g.respond(head, answer)
			return
		} else if command.IsAbortTrigger(text) && control {
			// An abort word from a member who may not stop the session is
			// an ordinary message.
			g.command(head, command.Invocation{Spec: command.Spec{Name: "stop"}})
			return
		}
	}
	items := make([]queue.Item, len(batch))
	for i, a := range batch {
		items[i] = a.Item
	}
	g.queue.Enqueue(key, items)
}

// inlineDirectives applies the directives the batch's messages start with
// when text follows them ("/model opus explain this", "/think high why…"):
// each changes the chat's setting as the directive alone would (the same
// roles and checks), and the message still runs — the turn leaves the
// directive out of the prompt. A refused directive is told, and the rest
// of its message runs all the same. It reports whether the first message
// is one.
func (g *Gateway) inlineDirectives(batch []arrival) bool {
	set := g.settings()
	first := false
	for i, a := range batch {
		name, arg, _, ok := session.SplitDirective(a.Message.Command())
		if !ok {
			continue
		}
		first = first || i == 0
		who := command.Role{Owner: set.Access.IsOwner(&a.Message), Control: set.Access.MayControl(&a.Message), Member: set.Access.IsMember(&a.Message)}
		if answer, held := g.handler.ApplyDirective(g.ctx, a.key, &a.Message, name, arg, who); !held && answer != "" {
			key, tgt := a.key, a.Message.Target()
			g.background(func() { g.delivery.Notify(key, tgt, answer) })
		}
	}
	return first
}

// respond answers an entry without the agent: the text is recorded in the
// outbox (the entry is done once it is delivered).
func (g *Gateway) respond(a arrival, text string) { g.respondAs(a, text, channel.FormatPlain) }

// respondAs is respond with the text in format (channel.FormatMarkdown is
// rendered for the channel as an agent's reply is).
func (g *Gateway) respondAs(a arrival, text string, format channel.Format) {
	if strings.TrimSpace(text) == "" {
		g.finish(a.ID, store.StateDone, "")
		return
	}
	g.delivery.Deliver(delivery.Reply{Key: a.key, ID: a.ID, Target: a.Message.Target(), Text: text, Format: format})
}

// resetSession starts a new session under key: a running turn is aborted,
// the old claude process stopped and the queue left as it is.
func (g *Gateway) resetSession(key sessionkey.Key, m *message.Message, reason string) {
	g.queue.Abort(key, "session reset")
	g.turns.Reset(g.ctx, key, m, reason)
}

// lanes is the queue's view of the gateway: it runs a turn and delivers
// its outcome.
type lanes struct{ g *Gateway }

func (l lanes) RunTurn(ctx context.Context, b *queue.Batch) queue.Status {
	g := l.g
	if until, _, paused := g.pause.Paused(); paused {
		// Claude's usage limit: nothing starts until the reset; the
		// entries stay queued and the pause's end looks at them again.
		last := b.Entries[len(b.Entries)-1]
		l.tellPaused(b.Key, message.Target{Instance: last.Instance, ChatID: last.ChatID, ThreadID: last.ThreadID}, until)
		return queue.Halt
	}
	if g.pause.Released() {
		// A usage-limit pause ended in this host's life: the batch may
		// have been read from the queue while the session's older
		// messages were parked, and the pause's end put them back ahead
		// of it. They run first: the lane reads its queue again (the
		// kick; the pause's end kicks it too).
		older, err := l.olderWaiting(ctx, b)
		switch {
		case err != nil:
			g.log.Error("reading the session queue before a turn failed", "session", b.Key.String(), "error", err)
			return queue.Retry
		case older:
			g.queue.Kick(b.Key)
			return queue.Halt
		}
	}
	key := b.Key
	refused, admitted := l.overBudget(ctx, b, key)
	if refused {
		return queue.Ran
	}
	if admitted != nil {
		// Turns.Run returns once the reply (and the ledger row with it)
		// is recorded: the budget counts the turn from the ledger then.
		defer admitted()
	}
	profile := g.turns.Profile(key.Agent) // the agent's settings, resolved once for the turn
	out := g.turns.Run(ctx, turn.Request{Key: key, Profile: &profile, Entries: b.Entries, Covers: b.Covers, Messages: b.Messages, Collected: b.Collected, Summaries: b.Summaries, Start: b.Start, Began: b.Began, AbortReason: b.AbortReason})
	switch {
	case out.Park:
		return l.park(ctx, b, out)
	case out.Halt:
		return queue.Halt
	case out.Retry:
		return queue.Retry
	}
	if out.Deliver {
		g.pause.OK()
	}
	return queue.Ran
}

// olderWaiting reports whether an entry of b's session older than b's
// first waits in the session's queue: one the lane's read of the queue
// did not see (unparked since).
func (l lanes) olderWaiting(ctx context.Context, b *queue.Batch) (bool, error) {
	es, err := l.g.store.ListPending(ctx, b.Key.String(), 1)
	if err != nil {
		return false, err
	}
	return len(es) > 0 && es[0].ID < b.Entries[0].ID, nil
}

// park parks a turn that hit claude's usage limit — its entries and the
// messages steered into it wait in the journal for the reset — and
// pauses every turn until then.
func (l lanes) park(ctx context.Context, b *queue.Batch, out turn.Outcome) queue.Status {
	g := l.g
	ids := append([]int64{b.Entries[0].ID}, b.Covers()...)
	if err := g.store.Park(ctx, ids...); err != nil {
		// They stay in processing: the next start runs them again.
		g.log.Error("parking the turn at the usage limit failed", "session", b.Key.String(), "error", err)
	} else {
		// Parked entries wait as queued ones do (they come back queued
		// and are counted off when they start): while they wait, a new
		// message of their session looks at its queue before it starts.
		g.queue.Recovered(len(ids))
	}
	until := g.pause.Hit(ctx, out.ResetAt, out.LimitReason)
	l.tellPaused(b.Key, out.Target, until)
	return queue.Halt
}

// tellPaused tells session key's chat, once a pause, that its messages
// wait for the usage limit's reset.
func (l lanes) tellPaused(key sessionkey.Key, tgt message.Target, until time.Time) {
	g := l.g
	if !g.pause.Tell(key.String()) {
		return
	}
	loc := g.settings().Turn.Location
	if loc == nil {
		loc = time.Local
	}
	at := until.In(loc)
	when := at.Format("15:04 (MST)")
	if at.YearDay() != g.opts.Now().In(at.Location()).YearDay() {
		when = at.Format("Mon 15:04 (MST)")
	}
	text := fmt.Sprintf("Claude's usage limit is reached. Your messages are kept; I'll continue at %s.", when)
	g.background(func() { g.delivery.Notify(key, tgt, text) })
}

// Paused says whether claude's usage limit pauses the turns: until when
// and why (the status page, clawhost status, the scheduler).
func (g *Gateway) Paused() (until time.Time, reason string, ok bool) { return g.pause.Paused() }

// Resume ends the usage-limit pause now (an owner's /resume); it reports
// whether the turns were paused.
func (g *Gateway) Resume(ctx context.Context) bool { return g.pause.Resume(ctx) }

func (l lanes) Abort(key sessionkey.Key) bool { return l.g.opts.Agent.Abort(key.String()) }

func (l lanes) Steer(key sessionkey.Key, items []queue.Item) bool {
	msgs := make([]message.Message, len(items))
	for i, it := range items {
		msgs[i] = it.Message
	}
	return l.g.turns.Steer(key.String(), msgs)
}

// notices sends the queue's notices (messages the cap dropped) in the
// background, as recovery's are.
type notices struct{ g *Gateway }

func (n notices) Notify(key sessionkey.Key, tgt message.Target, text string) {
	n.g.background(func() { n.g.delivery.Notify(key, tgt, text) })
}

// output is delivery as a turn sees it.
type output struct {
	*delivery.Dispatcher
	g *Gateway
}

func (o output) NewDraft(key sessionkey.Key, id int64, tgt message.Target, prev store.Live) turn.Draft {
	return o.Dispatcher.NewDraft(key, id, tgt, prev)
}

// Reply takes a turn's final reply out through the reply's route
// (core/replyroute): the message_sending hooks, the outbox, agent_end.
func (o output) Reply(r turn.Reply) {
	set := o.g.settings()
	o.g.replies.Route(set.Replies, set.Sources[r.Target.Instance], r)
}
