package gateway

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/delivery"
	"github.com/clawhost/clawhost/core/sessionkey"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/queue"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/channel"
)

// heldLease names the lease that keeps, for a pairing code's lifetime,
// the journal id of the message that asked for it: answered once an
// owner approves the sender (a lease: it survives a restart and every host
// of a cluster sees it).
func heldLease(from string) string { return "pairing/held/" + from }

// pairingHolds remember the message that got a sender a pairing code, and
// tell the owners of the request.
type pairingHolds struct {
	ctx        context.Context
	store      store.Store
	delivery   *delivery.Dispatcher
	log        hclog.Logger
	now        func() time.Time
	background func(func())
}

// hold remembers the message that got sender a pairing code.
func (p pairingHolds) hold(a arrival, code store.PairingCode) {
	ttl := code.ExpiresAt.Sub(p.now())
	if ttl <= 0 {
		return
	}
	if _, err := p.store.AcquireLease(p.ctx, store.LeaseRequest{Name: heldLease(a.Message.From), Holder: "pairing", TTL: ttl, Info: strconv.FormatInt(a.ID, 10)}); err != nil {
		p.log.Warn("remembering the message a pairing holds failed; it will not be answered after the approval", "sender", a.Message.From, "error", err)
	}
}

// tellOwners sends each owner, in their own direct chat, the
// request: who asks (name, @username, id) with Approve and Deny buttons
// where the channel has buttons, else the commands to type.
func (p pairingHolds) tellOwners(set Settings, m *message.Message, code store.PairingCode) {
	who := m.Sender.Name
	if m.Sender.Username != "" {
		who += " (@" + strings.TrimPrefix(m.Sender.Username, "@") + ")"
	}
	if strings.TrimSpace(who) == "" {
		who = "Someone"
	}
	text := fmt.Sprintf("🔑 %s asks to talk to the bot (%s, on %s; code %s, valid until %s).", who, m.From, m.Instance, code.Code, code.ExpiresAt.Format("15:04 MST"))
	buttons := [][]channel.Button{{{Label: "✅ Approve", ID: "/approve " + code.Code}, {Label: "❌ Deny", ID: "/deny " + code.Code}}}
	told := 0
	for _, o := range set.Access.Owners {
		instance, id, ok := strings.Cut(o, ":")
		if !ok || id == "" || id == "*" || !set.Approval.DirectChats[instance] {
			continue
		}
		tgt := message.Target{Instance: instance, ChatID: id}
		key := pairingKey(o)
		told++
		p.background(func() {
			if p.delivery.HasButtons(instance) {
				p.delivery.SendButtons(key, tgt, text, channel.FormatPlain, buttons)
				return
			}
			p.delivery.Notify(key, tgt, text+" Reply /approve "+code.Code+" or /deny "+code.Code+".")
		})
	}
	if told == 0 {
		p.log.Info("no owner can be told of the pairing request in a direct chat; approve it with clawhost pairing approve CODE", "sender", m.From)
	}
}

// PairingApproved is called when an owner approved entry ("<instance>:<sender
// id>", by /approve, the status page or clawhost pairing approve while the
// host runs), and at the start for an approval whose held message a host
// that died had not answered yet (answerApprovedHolds): the sender is told
// in the chat they asked from, and the message that got them the code is
// answered now — once: it comes back as a new message of its own id plus
// "#approved", which the journal takes once; only the call that journals
// it tells the sender.
func (g *Gateway) PairingApproved(ctx context.Context, entry string) {
	leases, err := g.store.ListLeases(ctx, heldLease(entry))
	if err != nil {
		return
	}
	var l store.Lease
	for _, x := range leases {
		if x.Name == heldLease(entry) { // a prefix: tg:1 lists tg:10 too
			l = x
		}
	}
	if l.Name == "" {
		return
	}
	id, err := strconv.ParseInt(l.Info, 10, 64)
	if err != nil {
		return
	}
	e, err := g.store.Entry(ctx, id)
	if err != nil {
		g.log.Warn("the message a pairing held is gone; not answered", "sender", entry, "error", err)
		return
	}
	m, err := message.Decode(e.Message)
	if err != nil {
		return
	}
	tgt := m.Target()
	m.MessageID += "#approved"
	m.ReceivedAt = g.opts.Now()
	set := g.settings()
	key := g.agents.Key(ctx, set.routing(), &m)
	// Journaled first: the sender is told by whoever journals the copy,
	// once, and a host that dies before that leaves the hold to the next
	// start (answerApprovedHolds), which tells them then.
	a := arrival{key: key, Item: queue.Item{Message: m}}
	fresh, synced, err := journal(ctx, g.store, g.obs, g.log, &a)
	if err == nil {
		err = synced()
	}
	if err != nil {
		g.log.Error("answering the message a pairing held failed", "sender", entry, "error", err)
		return
	}
	if fresh {
		g.delivery.Notify(pairingKey(entry), tgt, "✅ An owner approved you. Your message is answered now.")
		g.submit(a, 0)
	}
	if err := g.store.ReleaseLease(ctx, l.Name, l.Holder); err != nil {
		g.log.Warn("forgetting the message a pairing held failed", "sender", entry, "error", err)
	}
}

// answerApprovedHolds answers, at the start, the held messages of senders
// approved already: a host killed between recording an approval and
// journaling the held message's copy left its hold (a lease) behind, and
// nothing else would answer it.
func (g *Gateway) answerApprovedHolds(ctx context.Context) {
	leases, err := g.store.ListLeases(ctx, heldLease(""))
	if err != nil || len(leases) == 0 {
		return
	}
	approved, err := g.store.ApprovedSenders(ctx, "")
	if err != nil {
		g.log.Warn("listing approved senders failed; messages pairings held for them wait for the next start", "error", err)
		return
	}
	ok := map[string]bool{}
	for _, a := range approved {
		ok[a.Instance+":"+a.SenderID] = true
	}
	for _, l := range leases {
		if entry := strings.TrimPrefix(l.Name, heldLease("")); ok[entry] {
			g.log.Info("answering the message a pairing held, approved before the restart", "sender", entry)
			g.PairingApproved(ctx, entry)
		}
	}
}

// pairingKey orders the sends about sender's pairing (the owners' notices,
// the sender's approval): a key of no agent, so no session's.
func pairingKey(sender string) sessionkey.Key { return sessionkey.Key{Chat: "pairing:" + sender} }
