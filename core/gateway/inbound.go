package gateway

import (
	"context"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/queue"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/channel"
)

// conversations normalizes msgs and groups them by session, in order.
func (g *Gateway) conversations(instance string, msgs []channel.InboundMessage) [][]arrival {
	set := g.settings()
	now := g.opts.Now()
	index := map[sessionkey.Key]int{}
	var convs [][]arrival
	for _, in := range msgs {
		if in.Edited {
			g.log.Debug("edited message ignored", "instance", instance, "chat", in.ChatID, "message", in.MessageID)
			continue
		}
		m, problems := message.Normalize(instance, set.Sources[instance], in, now)
		for _, p := range problems {
			g.log.Warn("inbound message repaired", "instance", instance, "chat", m.ChatID, "message", m.MessageID, "problem", p)
		}
		if m.ChatID == "" {
			g.log.Warn("inbound message without chat or sender id dropped", "instance", instance, "message", m.MessageID)
			g.obs.Dropped(instance, "no chat id")
			continue
		}
		key := g.agents.Key(g.ctx, set.routing(), &m)
		chatMenuPort{g}.sawAgent(set, &m, key)
		i, ok := index[key]
		if !ok {
			i = len(convs)
			index[key] = i
			convs = append(convs, nil)
		}
		convs[i] = append(convs[i], arrival{key: key, Item: queue.Item{Message: m}})
	}
	return convs
}

// accept stores one conversation's messages in order and hands each new
// one to its arrival stage. It returns once every message is durable, the
// plugin's ack standing on that; a message goes to its arrival stage as
// soon as it is committed (it survives kill -9 then), so its turn is
// prepared and claude started while the fsync runs. Nothing leaves the
// process on the strength of the commit alone: every send waits for a
// later fsync, which covers this commit too (store.EarlyAcceptor).
func (g *Gateway) accept(ctx context.Context, conv []arrival) error {
	var synced func() error
	for _, a := range conv {
		fresh, s, err := journal(ctx, g.store, g.obs, g.log, &a)
		if err != nil {
			return err // no ack for the earlier ones either: their redelivery finds them stored
		}
		synced = s // a later commit's sync covers the earlier ones
		if fresh {
			g.submit(a, 0)
		}
	}
	if synced == nil {
		return nil
	}
	return synced()
}

// journal stores a's message in st, the journal (setting its id and the
// journaled form); fresh is false for a message the journal already
// holds, which is ignored. It returns at the commit: synced waits until
// the message is durable (store.AcceptEarly).
func journal(ctx context.Context, st store.Store, obs Observer, log hclog.Logger, a *arrival) (fresh bool, synced func() error, err error) {
	m := &a.Message
	a.Raw = message.Encode(m)
	stored := *m
	stored.V = message.Version // as Decode(a.Raw) has it
	a.Journaled = &stored
	res, synced, err := store.AcceptEarly(ctx, st, store.Inbound{Instance: m.Instance, ChatID: m.ChatID, ThreadID: m.ThreadID, MessageID: m.MessageID, ReceivedAt: m.ReceivedAt, Message: a.Raw})
	if err != nil {
		return false, nil, err
	}
	if res.Duplicate {
		obs.Duplicate(m.Instance)
		log.Debug("duplicate message ignored", "instance", m.Instance, "chat", m.ChatID, "message", m.MessageID)
		return false, synced, nil
	}
	obs.MessageIn(m.Instance)
	a.ID = res.ID
	return true, synced, nil
}
