package store

import "time"

// RecoveryWrites are the writes the recovery rules make, inside the
// engine's Recover transaction.
type RecoveryWrites struct {
	// Requeue stores an interrupted run's entry back in e.State (queued,
	// or accepted when it has no session) with e.Attempts, its began mark
	// cleared, at e.UpdatedAt.
	Requeue func(e Entry) error
	// Fail finishes the entry as failed with reason at now.
	Fail func(id int64, reason string) error
	// Reply loads the stored reply of a replied entry.
	Reply func(e Entry) (PendingReply, error)
}

// WithDefaults fills the zero fields of o with the contract's defaults.
func (o RecoverOptions) WithDefaults() RecoverOptions {
	if o.StaleAfter <= 0 {
		o.StaleAfter = DefaultStaleAfter
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	return o
}

// ApplyRecovery applies the recovery rules of the package documentation
// to the open entries an engine's Recover took (oldest first), at now,
// through the engine's writes: accepted and queued entries resume; an
// interrupted run that never began goes back to its queue with its
// attempt given back; one that began goes back while it has attempts left,
// else fails; a produced reply is delivered unless older than StaleAfter, then
// it fails as stale. Every engine's Recover calls it, so the rules are
// written once.
func ApplyRecovery(open []Entry, opts RecoverOptions, now time.Time, w RecoveryWrites) (Recovery, error) {
	opts = opts.WithDefaults()
	var rec Recovery
	for _, e := range open {
		switch e.State {
		case StateAccepted, StateQueued:
			rec.Resume = append(rec.Resume, e)
		case StateProcessing:
			if !e.Began && e.Launches < MaxLaunches {
				// Launched, but killed before claude read the prompt:
				// nothing ran, so nothing is spent.
				e.Attempts = max(e.Attempts-1, 0)
			} else {
				e.Began = true
			}
			if !e.Began || e.Attempts < opts.MaxAttempts {
				e.Began = false
				e.State = StateQueued
				if e.SessionKey == "" {
					e.State = StateAccepted
				}
				e.UpdatedAt = now
				if err := w.Requeue(e); err != nil {
					return Recovery{}, err
				}
				rec.Resume = append(rec.Resume, e)
				continue
			}
			e.State, e.Reason, e.UpdatedAt = StateFailed, "interrupted", now
			if err := w.Fail(e.ID, e.Reason); err != nil {
				return Recovery{}, err
			}
			rec.Failed = append(rec.Failed, e)
		case StateParked:
			rec.Parked = append(rec.Parked, e)
		case StateReplied:
			p, err := w.Reply(e)
			if err != nil {
				return Recovery{}, err
			}
			if now.Sub(p.Reply.ProducedAt) > opts.StaleAfter {
				p.Entry.State, p.Entry.Reason, p.Entry.UpdatedAt = StateFailed, "stale reply", now
				if err := w.Fail(e.ID, p.Entry.Reason); err != nil {
					return Recovery{}, err
				}
				rec.Stale = append(rec.Stale, p)
				continue
			}
			rec.Deliver = append(rec.Deliver, p)
		}
	}
	return rec, nil
}
