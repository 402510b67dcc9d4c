package gateway

import (
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
func (g *Gateway) here(key string, ids []int64, then func()) bool {
	if g.opts.Placement == nil {
		return true
	}
	since := time.Now()
	if p := g.placeOnce(key, ids, since); p.done {
		return p.here
	}
	g.background(func() {
		wait := behindPoll
		for {
			select {
			case <-g.ctx.Done():
				return // the entries stay in the journal
			case <-time.After(wait):
			}
			p := g.placeOnce(key, ids, since)
			if p.done {
				if p.here {
					then()
				}
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
		if len(ids) > 0 && time.Since(since) < behindMax {
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

// Handed resumes entries another host handed to this one (it runs their
// sessions): accepted ones are routed, queued ones run in their lanes.
func (g *Gateway) Handed(entries []store.Entry) {
	select {
	case <-g.ready:
	case <-g.ctx.Done():
		return
	}
	if len(entries) > 0 {
		g.resume(entries)
	}
}
