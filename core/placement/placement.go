// Package placement decides, with several hosts sharing one database, on
// which host each session runs, and holds a session's new entries while an
// older message of its chat is still on its way to this host (after a
// failover): the pipeline's placement stage, beside admission. The
// composer (core/gateway) asks Here for every accepted entry before its
// arrival stage runs; with no Placement (one host) every session runs
// here.
//
// The stage owns its small state (the sessions' waits, the takes under
// way) and reaches the store through the Placement port; it never calls
// the gateway, which hands it what to run once a session is placed here.
package placement

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/internal/tstime"
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
// hands (Placement.Behind): checked every BehindPoll, for at most
// behindMax (then the entries go ahead: a message is not held hostage by
// one that may never come).
const (
	BehindPoll = 100 * time.Millisecond
	behindMax  = 30 * time.Second
)

// Placer runs the placement of sessions on hosts (see Here); a nil
// Placement places every session here.
type Placer struct {
	placement  Placement
	clock      tstime.Clock
	ctx        context.Context
	log        hclog.Logger
	background func(func())
	// waits are the sessions whose entries wait to be placed here (see
	// here), by key.
	mu    sync.Mutex
	waits map[string]*placeWait
	// taking counts the takes of entries into this host's hands (an
	// adoption, entries handed over) whose store write may have been made
	// and whose sessions are not known yet; arriving, by session key, the
	// takes resuming entries of that session (see settled). tookWake is
	// signalled on mu when taking drops; settling counts the waits
	// waiting for it.
	taking   int
	arriving map[string]int
	tookWake sync.Cond
	settling int
}

// Here reports whether this host runs the session key; when another host
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
func (p *Placer) Here(key string, ids []int64, then func(), own int) bool {
	if p.placement == nil {
		return true
	}
	if p.joinWait(key, ids, then) {
		return false
	}
	since := p.clock.Now()
	first := p.placeOnce(key, ids, since)
	if first.done && !first.here {
		return false
	}
	p.mu.Lock()
	if first.done && p.settled(key, own, nil, false) {
		p.mu.Unlock()
		return true
	}
	if w := p.waits[key]; w != nil { // another entry's wait began meanwhile
		w.join(ids, then)
		p.mu.Unlock()
		return false
	}
	w := &placeWait{}
	w.join(ids, then)
	if p.waits == nil {
		p.waits = map[string]*placeWait{}
	}
	p.waits[key] = w
	p.mu.Unlock()
	p.background(func() {
		wait := BehindPoll
		if first.done { // here, but a take of an older entry may be under way
			wait = 0
		}
		for {
			select {
			case <-p.ctx.Done():
				return // the entries stay in the journal
			case <-p.clock.After(wait):
			}
			p.mu.Lock()
			ids := slices.Clone(w.ids)
			p.mu.Unlock()
			pl := p.placeOnce(key, ids, since)
			if pl.done {
				// Under the lock: an entry arriving now waits until the
				// waiting ones are submitted, and comes after them.
				p.mu.Lock()
				if pl.here && !p.settled(key, 0, w, true) {
					p.mu.Unlock()
					wait = BehindPoll
					continue
				}
				delete(p.waits, key)
				if pl.here {
					slices.SortStableFunc(w.runs, func(a, b placeRun) int { return cmp.Compare(a.id, b.id) })
					for _, r := range w.runs {
						r.then()
					}
				}
				p.mu.Unlock()
				return
			}
			if pl.behind {
				wait = BehindPoll
			} else {
				wait = min(wait*2, placeRetry)
			}
		}
	})
	return false
}

// settled reports, under mu, whether a session's entries that the store
// found with nothing older of their chat out of this host's hands may run
// now. The store's answer alone is not enough: a take of this host (an
// adoption, or entries handed over) writes an older entry into its hands
// before the gateway resumes it, and between the two the older one is
// neither out of hand nor in the session's wait
// (TestOlderMessageTakenWhileANewerOneWaits). So it waits for the takes
// whose sessions are not known yet (their store calls, a few
// milliseconds; block false: says no instead, and the caller waits in the
// background), and says no while a take resumes entries of the session
// (beyond own, the caller's) or while another wait than self holds some:
// they come first.
func (p *Placer) settled(key string, own int, self *placeWait, block bool) bool {
	if p.tookWake.L == nil {
		p.tookWake.L = &p.mu
	}
	for p.taking > 0 {
		if !block {
			return false
		}
		p.settling++
		p.tookWake.Wait()
		p.settling--
	}
	return p.arriving[key] <= own && p.waits[key] == self
}

// BeginTake marks a take of entries into this host's hands as begun,
// before its store call: Took ends it.
func (p *Placer) BeginTake() {
	p.mu.Lock()
	p.taking++
	p.mu.Unlock()
}

// Took marks the sessions of a take's entries arriving (the take's store
// call answered and its sessions are known), each until Arrived.
func (p *Placer) Took(keys map[string]int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.taking--
	if p.arriving == nil {
		p.arriving = map[string]int{}
	}
	for k := range keys {
		p.arriving[k]++
	}
	if p.tookWake.L != nil {
		p.tookWake.Broadcast()
	}
}

// Arrived ends Took for a session: its entries were placed.
func (p *Placer) Arrived(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.arriving[key]--; p.arriving[key] <= 0 {
		delete(p.arriving, key)
	}
}

// placeWait is a session's entries waiting to be placed (see Here).
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
func (p *Placer) joinWait(key string, ids []int64, then func()) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	w := p.waits[key]
	if w == nil || len(ids) == 0 {
		return false
	}
	w.join(ids, then)
	return true
}

// Forget makes the next placement of key ask the store (see
// Placement.Forget).
func (p *Placer) Forget(key string) {
	if p.placement != nil {
		p.placement.Forget(key)
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
func (p *Placer) placeOnce(key string, ids []int64, since time.Time) placed {
	host, here, err := p.placement.Place(p.ctx, key)
	if err != nil {
		if p.ctx.Err() == nil {
			p.log.Error("placing a session on a host failed; retrying", "session", key, "error", err)
		}
		return placed{}
	}
	if here {
		if len(ids) > 0 && p.clock.Since(since) < behindMax {
			behind, err := p.placement.Behind(p.ctx, slices.Min(ids))
			if err != nil && p.ctx.Err() == nil {
				p.log.Warn("checking for older messages of the chat failed; going ahead", "session", key, "error", err)
			}
			if behind {
				p.log.Debug("messages wait for an older one of their chat on its way to this host", "session", key, "ids", ids)
				return placed{behind: true}
			}
		}
		return placed{done: true, here: true}
	}
	if err := p.placement.Handoff(p.ctx, host, ids...); err != nil {
		if p.ctx.Err() == nil {
			p.log.Error("handing messages to the host of their session failed; retrying", "session", key, "host", host, "error", err)
		}
		return placed{}
	}
	p.log.Debug("messages handed to the host of their session", "session", key, "host", host, "ids", ids)
	return placed{done: true}
}

// RunsHere reports whether this host runs session key (false when the
// store cannot say).
func (p *Placer) RunsHere(key string) bool {
	if p.placement == nil {
		return true
	}
	_, here, err := p.placement.Place(p.ctx, key)
	return err == nil && here
}

// Options are the stage's ports.
type Options struct {
	// Placement decides which host runs a session; nil: this one runs
	// every session.
	Placement Placement
	Clock     tstime.Clock
	// Ctx is the host's lifetime: the waits end with it (their entries
	// stay in the journal).
	Ctx    context.Context
	Logger hclog.Logger
	// Background runs a wait on the caller's wait group.
	Background func(func())
}

// New returns the stage.
func New(opts Options) *Placer {
	return &Placer{placement: opts.Placement, clock: tstime.Or(opts.Clock), ctx: opts.Ctx, log: opts.Logger, background: opts.Background}
}

// Waits says how many sessions have entries waiting to be placed here and
// how many of those waits wait for a take to place what it took (the
// tests wait on them).
func (p *Placer) Waits() (sessions, settling int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.waits), p.settling
}
