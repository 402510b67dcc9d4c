package gateway

import (
	"context"
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

// here reports whether this host runs the session key; when another host
// does, the entries are handed to it and false is returned. With a store
// failure it retries in the background (the entries stay in the journal,
// owned by this host, meanwhile) and calls then with the answer.
func (g *Gateway) here(key string, ids []int64, then func()) bool {
	if g.opts.Placement == nil {
		return true
	}
	if done, here := g.placeOnce(key, ids); done {
		return here
	}
	g.background(func() {
		wait := 100 * time.Millisecond
		for {
			select {
			case <-g.ctx.Done():
				return // the entries stay in the journal
			case <-time.After(wait):
			}
			if done, here := g.placeOnce(key, ids); done {
				if here {
					then()
				}
				return
			}
			wait = min(wait*2, placeRetry)
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

// placeOnce places the session and hands the entries over when it runs
// elsewhere; done is false when the store failed.
func (g *Gateway) placeOnce(key string, ids []int64) (done, here bool) {
	host, here, err := g.opts.Placement.Place(g.ctx, key)
	if err != nil {
		if g.ctx.Err() == nil {
			g.log.Error("placing a session on a host failed; retrying", "session", key, "error", err)
		}
		return false, false
	}
	if here {
		return true, true
	}
	if err := g.opts.Placement.Handoff(g.ctx, host, ids...); err != nil {
		if g.ctx.Err() == nil {
			g.log.Error("handing messages to the host of their session failed; retrying", "session", key, "host", host, "error", err)
		}
		return false, false
	}
	g.log.Debug("messages handed to the host of their session", "session", key, "host", host, "ids", ids)
	return true, false
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
