package store

import (
	"errors"
	"time"
)

// Defaults of the contract. An engine opened without overrides uses them,
// and the conformance suite (core/store/storetest) expects them.
const (
	// DefaultDedupeTTL is how long an accepted dedupe key rejects
	// duplicates: as long as a platform redelivers (Telegram keeps
	// unconfirmed updates for 24 hours), so a host down for hours between
	// its ack and the platform's offset confirmation does not run a batch
	// twice.
	DefaultDedupeTTL = 24 * time.Hour
	// DefaultStaleAfter is [RecoverOptions.StaleAfter] when zero.
	DefaultStaleAfter = 15 * time.Minute
	// DefaultMaxAttempts is [RecoverOptions.MaxAttempts] when zero.
	DefaultMaxAttempts = 2
	// DefaultMaxPendingPairings caps the unexpired pairing codes of one
	// instance ([Pairing.RequestPairing]).
	DefaultMaxPendingPairings = 3
)

// Errors returned by the store. Engines wrap them; test them with
// errors.Is.
var (
	// ErrNotFound: the journal entry, session, reply, chunk or pairing code
	// does not exist.
	ErrNotFound = errors.New("not found")
	// ErrBadTransition: the requested journal state change would move an
	// entry backwards or out of a terminal state.
	ErrBadTransition = errors.New("invalid state transition")
	// ErrExpired: the pairing code exists but expired.
	ErrExpired = errors.New("expired")
	// ErrTooManyPending: the instance already has the maximum number of
	// pending pairing codes.
	ErrTooManyPending = errors.New("too many pending pairing requests")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("store closed")
)

// Store is everything the core persists. Every engine implements it
// (core/store/sqlite is the embedded one) and passes the conformance suite
// core/store/storetest. All methods are safe for concurrent use.
type Store interface {
	Journal
	Outbox
	Sessions
	Pairing
	// Close waits for the writes in flight, then releases the storage.
	// Calling it again returns nil. After Close, writes fail with
	// [ErrClosed] and reads fail with an error.
	Close() error
}
