package gateway

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/clawhost/clawhost/core/store"
)

// Placement decides which of the hosts sharing one database runs a
// session: the whole conversation pipeline after the journal (access,
// debounce, commands, the queue, the turn) runs on that host, so its
// in-memory state (debounce windows, group history, queue summaries, the
// warm claude process) lives in one place. core implements it on the
// store's session placements; nil (one host) runs everything here.
type Placement interface {
	// Place returns the host that runs the session key, and whether that
	// is this host.
	Place(ctx context.Context, key string) (host string, here bool, err error)
	// Behind reports whether an entry of the same chat older than entry
	// id is still open out of this host's hands (store.Cluster.OlderOpen):
	// after a host died, an adopted older message may reach the session's
	// new host after a newer one; the newer one waits for it.
	Behind(ctx context.Context, id int64) (bool, error)
	// Handoff gives accepted or queued entries to the host that runs
	// their session (store.Cluster.Handoff).
	Handoff(ctx context.Context, to string, ids ...int64) error
	// Forget drops what Place remembered about the session key: the next
	// Place asks the store. Entries resumed here (handed over by a host
	// whose view of the placements may differ from this one's, adopted,
	// or recovered) are placed afresh, so two hosts that remember
	// different answers do not hand them to each other without end.
	Forget(key string)
}

// placeRetry bounds the wait between attempts to place a session or hand
// its entries over while the store fails.
const placeRetry = 5 * time.Second

// Waiting for an older message of the chat still out of this host's
// hands (Placement.Behind): checked every behindPoll, for at most
// behindMax (then the entries go ahead: a message is not held hostage by
// one that may never come).
const (
	behindPoll = 100 * time.Millisecond
	behindMax  = 30 * time.Second
)

// here reports whether this host runs the session key; when another host
// does, the entries are handed to it and false is returned. With a store
// failure it retries in the background (the entries stay in the journal,
// owned by this host, meanwhile) and calls then with the answer; likewise
// while an older message of the same chat is still on its way here.
//
// A session has at most one such wait: entries that arrive while it lasts
// join it, whatever their own check would say, and when it ends every
// then runs in the order of the entries' ids. Two waits of one chat that
// each checked on their own timer ran a newer message before an older
// one when the newer one's check came round first (TestNewerMessages-
// WaitingForAnOlderOneKeepTheirOrder). The arrivals of one channel are
// submitted one after another, so a wait is set up before the next
// entry's here looks for it.
//
// The store's answer that nothing older is out of this host's hands is
// trusted only once every take of this host that may have taken such an
// older entry has placed it (settled): own is the number of takes of the
// session's entries the caller itself is part of (resume), 0 or 1.
func (g *Gateway) here(key string, ids []int64, then func(), own int) bool {
	if g.opts.Placement == nil {
		return true
	}
	if g.joinWait(key, ids, then) {
		return false
	}
	since := g.opts.Clock.Now()
	p := g.placeOnce(key, ids, since)
	if p.done && !p.here {
		return false
	}
	g.waitMu.Lock()
	if p.done && g.settled(key, own, nil, false) {
		g.waitMu.Unlock()
		return true
	}
	if w := g.waits[key]; w != nil { // another entry's wait began meanwhile
		w.join(ids, then)
		g.waitMu.Unlock()
		return false
	}
	w := &placeWait{}
	w.join(ids, then)
	if g.waits == nil {
		g.waits = map[string]*placeWait{}
	}
	g.waits[key] = w
	g.waitMu.Unlock()
	g.background(func() {
		wait := behindPoll
		if p.done { // here, but a take of an older entry may be under way
			wait = 0
		}
		for {
			select {
			case <-g.ctx.Done():
				return // the entries stay in the journal
			case <-g.opts.Clock.After(wait):
			}
			g.waitMu.Lock()
			ids := slices.Clone(w.ids)
			g.waitMu.Unlock()
			p := g.placeOnce(key, ids, since)
			if p.done {
				// Under the lock: an entry arriving now waits until the
				// waiting ones are submitted, and comes after them.
				g.waitMu.Lock()
				if p.here && !g.settled(key, 0, w, true) {
					g.waitMu.Unlock()
					wait = behindPoll
					continue
				}
				delete(g.waits, key)
				if p.here {
					slices.SortStableFunc(w.runs, func(a, b placeRun) int { return cmp.Compare(a.id, b.id) })
					for _, r := range w.runs {
						r.then()
					}
				}
				g.waitMu.Unlock()
				return
			}
			if p.behind {
				wait = behindPoll
			} else {
				wait = min(wait*2, placeRetry)
			}
		}
	})
	return false
}

// settled reports, under waitMu, whether a session's entries that the
// store found with nothing older of their chat out of this host's hands
// may run now. The store's answer alone is not enough: a take of this
// host (an adoption, or entries handed over) writes an older entry into
// its hands before the gateway resumes it, and between the two the older
// one is neither out of hand nor in the session's wait
// (TestOlderMessageTakenWhileANewerOneWaits). So it waits for the takes
// whose sessions are not known yet (their store calls, a few
// milliseconds; block false: says no instead, and the caller waits in the
// background), and says no while a take resumes entries of the session
// (beyond own, the caller's) or while another wait than self holds some:
// they come first.
func (g *Gateway) settled(key string, own int, self *placeWait, block bool) bool {
	if g.tookWake.L == nil {
		g.tookWake.L = &g.waitMu
	}
	for g.taking > 0 {
		if !block {
			return false
		}
		g.settling++
		g.tookWake.Wait()
		g.settling--
	}
	return g.arriving[key] <= own && g.waits[key] == self
}

// beginTake marks a take of entries into this host's hands as begun,
// before its store call: resume(…, true) ends it.
func (g *Gateway) beginTake() {
	g.waitMu.Lock()
	g.taking++
	g.waitMu.Unlock()
}

// took marks the sessions of a take's entries arriving (the take's store
// call answered and its sessions are known), each until arrived.
func (g *Gateway) took(keys map[string]int) {
	g.waitMu.Lock()
	defer g.waitMu.Unlock()
	g.taking--
	if g.arriving == nil {
		g.arriving = map[string]int{}
	}
	for k := range keys {
		g.arriving[k]++
	}
	g.tookWake.Broadcast()
}

// arrived ends took for a session: its entries were placed.
func (g *Gateway) arrived(key string) {
	g.waitMu.Lock()
	defer g.waitMu.Unlock()
	if g.arriving[key]--; g.arriving[key] <= 0 {
		delete(g.arriving, key)
	}
}

// placeWait is a session's entries waiting to be placed (see here).
type placeWait struct {
	ids  []int64
	runs []placeRun
}

// placeRun is what runs an entry (or a recovered lane: its oldest id) once
// its session is placed here.
type placeRun struct {
	id   int64
	then func()
}

func (w *placeWait) join(ids []int64, then func()) {
	var first int64
	if len(ids) > 0 {
		first = slices.Min(ids)
	}
	w.ids = append(w.ids, ids...)
	w.runs = append(w.runs, placeRun{id: first, then: then})
}

// joinWait adds the entries to their session's wait, when there is one.
func (g *Gateway) joinWait(key string, ids []int64, then func()) bool {
	g.waitMu.Lock()
	defer g.waitMu.Unlock()
	w := g.waits[key]
	if w == nil || len(ids) == 0 {
		return false
	}
	w.join(ids, then)
	return true
}

// forgetPlace makes the next placement of key ask the store (see
// Placement.Forget).
func (g *Gateway) forgetPlace(key string) {
	if g.opts.Placement != nil {
		g.opts.Placement.Forget(key)
	}
}

// placed is one attempt of placeOnce: done is false when the store failed
// or, here, an older message of the chat is still out of this host's
// hands (behind; see Placement.Behind).
type placed struct{ done, here, behind bool }

// placeOnce places the session and hands the entries over when it runs
// elsewhere. Here, the entries wait (since when the first attempt was
// made, at most behindMax) while an older message of their chat is open
// out of this host's hands: across a failover, a new message must not
// overtake an adopted older one on its way here.
func (g *Gateway) placeOnce(key string, ids []int64, since time.Time) placed {
	host, here, err := g.opts.Placement.Place(g.ctx, key)
	if err != nil {
		if g.ctx.Err() == nil {
			g.log.Error("placing a session on a host failed; retrying", "session", key, "error", err)
		}
		return placed{}
	}
	if here {
		if len(ids) > 0 && g.opts.Clock.Since(since) < behindMax {
			behind, err := g.opts.Placement.Behind(g.ctx, slices.Min(ids))
			if err != nil && g.ctx.Err() == nil {
				g.log.Warn("checking for older messages of the chat failed; going ahead", "session", key, "error", err)
			}
			if behind {
				g.log.Debug("messages wait for an older one of their chat on its way to this host", "session", key, "ids", ids)
				return placed{behind: true}
			}
		}
		return placed{done: true, here: true}
	}
	if err := g.opts.Placement.Handoff(g.ctx, host, ids...); err != nil {
		if g.ctx.Err() == nil {
			g.log.Error("handing messages to the host of their session failed; retrying", "session", key, "host", host, "error", err)
		}
		return placed{}
	}
	g.log.Debug("messages handed to the host of their session", "session", key, "host", host, "ids", ids)
	return placed{done: true}
}

// Handed takes the entries other hosts handed to this one (it runs their
// sessions) with take (store.Cluster.TakeHanded) and resumes them:
// accepted ones are routed, queued ones run in their lanes. It returns how
// many it took. The take is made here, not by the caller, so that no
// newer message of their chats overtakes them between the store's write
// and their resuming (see settled).
func (g *Gateway) Handed(ctx context.Context, take func(context.Context) ([]store.Entry, error)) (int, error) {
	select {
	case <-g.ready:
	case <-g.ctx.Done():
		return 0, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	g.beginTake()
	es, err := take(ctx)
	g.resume(es, true)
	return len(es), err
}
