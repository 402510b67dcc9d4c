package queue

import (
	"fmt"
	"strings"

	"github.com/clawhost/clawhost/core/envelope"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store"
)

// applyCap enforces the queue cap: DropOld drops the oldest waiting
// messages, DropNew the newest, DropSummarize the oldest but keeps a
// one-line summary of each for the next turn. With DropOld and DropNew the
// chat is told (tellDropped); summarized messages still reach the agent.
func (q *Queue) applyCap(pol Policy, key sessionkey.Key, instance string) {
	q.mu.Lock()
	l := q.lane(key)
	q.mu.Unlock()
	n, err := q.count(l)
	if err != nil || n <= pol.Cap {
		return
	}
	pending, err := q.pending(l)
	if err != nil {
		return
	}
	// The cap counts what would be turns: the messages a debounce window
	// merged are one (a three-part burst is not "three messages waiting").
	units := q.units(key, pending)
	over := len(units) - pol.Cap
	if over <= 0 {
		return
	}
	var drop []store.Entry
	if pol.Drop == DropNew {
		units = units[len(units)-over:]
	} else {
		units = units[:over]
	}
	for _, u := range units {
		drop = append(drop, u...)
	}
	ids := make([]int64, len(drop))
	for i, e := range drop {
		ids[i] = e.ID
	}
	// Only what is still waiting is dropped: the lane may have started the
	// oldest entry since it was listed.
	q.mu.Lock()
	l.forget()
	q.mu.Unlock()
	if err := q.journal.Finish(q.ctx, store.FinishRequest{IDs: ids, State: store.StateDropped, Reason: "queue full", From: store.StateQueued}); err != nil {
		if q.ctx.Err() == nil {
			q.log.Error("journal finish failed", "ids", ids, "error", err)
		}
		return
	}
	drop = q.reallyDropped(drop)
	ids = ids[:0]
	for _, e := range drop {
		ids = append(ids, e.ID)
	}
	q.add(-len(ids))
	for range ids {
		q.obs.Dropped(instance, "queue full")
	}
	q.log.Warn("queue full; messages dropped", "session", key.String(), "policy", pol.Drop, "dropped", len(ids), "cap", pol.Cap)
	if pol.Drop == DropSummarize {
		q.summarize(key, drop, pol.Cap)
	} else {
		q.tellDropped(key, drop, pol)
	}
}

// tellDropped tells each chat whose messages the cap dropped, in one
// message until the session's next turn starts, however often the cap
// strikes meanwhile (a flood gets one notice, not one per message).
func (q *Queue) tellDropped(key sessionkey.Key, drop []store.Entry, pol Policy) {
	if q.notify == nil || len(drop) == 0 {
		return
	}
	q.mu.Lock()
	told := q.toldCap[key]
	q.toldCap[key] = true
	q.mu.Unlock()
	if told {
		return
	}
	which := "oldest"
	if pol.Drop == DropNew {
		which = "newest"
	}
	text := fmt.Sprintf("(Some of your messages were not answered: more than %d were waiting, so the %s were skipped. Please send again what still needs an answer.)", pol.Cap, which)
	seen := map[message.Target]bool{}
	for _, e := range drop {
		m, err := message.Decode(e.Message)
		if err != nil || seen[m.Target()] {
			continue
		}
		seen[m.Target()] = true
		q.notify.Notify(key, m.Target(), text)
	}
}

// reallyDropped keeps the entries the cap's Finish did drop (dropped for
// "queue full"); one a lane started meanwhile is running, not dropped.
func (q *Queue) reallyDropped(drop []store.Entry) []store.Entry {
	var out []store.Entry
	for _, e := range drop {
		cur, err := q.journal.Entry(q.ctx, e.ID)
		if err == nil && cur.State == store.StateDropped && cur.Reason == "queue full" {
			out = append(out, e)
		}
	}
	return out
}

// summarize keeps one line per dropped entry (at most limit per session).
func (q *Queue) summarize(key sessionkey.Key, drop []store.Entry, limit int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	sum := q.summaries[key]
	for _, e := range drop {
		if m, err := message.Decode(e.Message); err == nil {
			sum = append(sum, summaryLine(&m))
		}
	}
	if len(sum) > limit {
		sum = sum[len(sum)-limit:]
	}
	q.summaries[key] = sum
}

func summaryLine(m *message.Message) string {
	name := m.Sender.Name
	if name == "" {
		name = m.Sender.ID
	}
	body := strings.Join(strings.Fields(m.Body), " ")
	if r := []rune(body); len(r) > 140 {
		body = string(r[:139]) + "…"
	}
	return "- " + envelope.SanitizeHeaderPart(name) + ": " + body
}

// units groups a session's waiting entries into what would be turns: the
// entries one debounce window merged (the lane's batch map) stay together.
func (q *Queue) units(key sessionkey.Key, pending []store.Entry) [][]store.Entry {
	q.mu.Lock()
	heads := map[int64]int64{}
	if l := q.lanes[key]; l != nil {
		for _, e := range pending {
			if h, ok := l.batch[e.ID]; ok {
				heads[e.ID] = h
			}
		}
	}
	q.mu.Unlock()
	var out [][]store.Entry
	index := map[int64]int{}
	for _, e := range pending {
		h, ok := heads[e.ID]
		if !ok {
			out = append(out, []store.Entry{e})
			continue
		}
		if i, seen := index[h]; seen {
			out[i] = append(out[i], e)
			continue
		}
		index[h] = len(out)
		out = append(out, []store.Entry{e})
	}
	return out
}
