package store

import (
	"context"
	"errors"
	"time"
)

// ErrLeaseHeld: another holder's lease has not expired.
var ErrLeaseHeld = errors.New("lease held by another host")

// Leases are named, time-bounded claims shared by every host on one
// storage: "host/<id>" (the host is alive), "channel/<instance>" (the one
// host that runs a channel instance: one poller per Telegram token).
// A holder keeps a lease by acquiring it again before it expires; a lease
// nobody renewed is free for the next Acquire, whoever asks, and the
// takeover increments its Epoch (a fencing token: a holder that sees a
// higher epoch than its own knows it lost the lease). Expiry is decided on
// the engine's clock, so the hosts' clocks do not matter.
type Leases interface {
	// AcquireLease takes the lease req.Name for req.Holder until now +
	// req.TTL, or extends it when req.Holder holds it (Epoch unchanged).
	// When another holder's lease has not expired it changes nothing and
	// returns that lease with ErrLeaseHeld. Name, Holder and a positive TTL
	// are required.
	AcquireLease(ctx context.Context, req LeaseRequest) (Lease, error)
	// ReleaseLease gives back a lease holder holds (it expires now, its
	// holder and epoch are kept for the record); a lease holder does not
	// hold is left alone, without an error.
	ReleaseLease(ctx context.Context, name, holder string) error
	// ListLeases returns the leases whose name starts with prefix (""
	// for all), expired ones included, by name. Nil when none.
	ListLeases(ctx context.Context, prefix string) ([]Lease, error)
}

// LeaseRequest asks for a lease.
type LeaseRequest struct {
	// Name names what is held ("host/h1", "channel/telegram").
	Name string
	// Holder is the host id asking.
	Holder string
	// TTL is how long the lease lasts unless renewed.
	TTL time.Duration
	// Info is kept with the lease for the status page (the holder's
	// admin address, its version); replaced at every Acquire.
	Info string
}

// Lease is a stored lease.
type Lease struct {
	Name   string
	Holder string
	Info   string
	// Epoch counts the holders the lease had: 1 for the first, +1 at
	// every takeover by another holder (not at a renewal, nor when a
	// holder takes back the lease it released).
	Epoch int64
	// Acquired is when Holder took it; Renewed when it last extended it.
	Acquired time.Time
	Renewed  time.Time
	// Expires is when the lease ends unless renewed.
	Expires time.Time
}

// Live reports whether the lease has not expired at now.
func (l Lease) Live(now time.Time) bool { return now.Before(l.Expires) }
