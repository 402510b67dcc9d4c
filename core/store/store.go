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
	// MaxLaunches bounds the runs of one message that never began
	// ([Entry.Began]): from the MaxLaunches-th on, an interrupted launch
	// counts as a run, so a message whose launch kills its host (or
	// anything else that kills a host before claude reads the prompt,
	// every time) is given up rather than retried without end.
	MaxLaunches = 10
	// DefaultMaxPendingPairings caps the unexpired pairing codes of one
	// instance ([Pairing.RequestPairing]).
	DefaultMaxPendingPairings = 3
	// MaxWrongPairingGuesses is how many unknown codes [Pairing.ApprovePairing]
	// accepts within PairingGuessWindow. The one that reaches it voids
	// every pending code (the codes a guesser may be closing in on; their
	// senders ask again) and until the window has passed every approval is
	// refused with [ErrTooManyAttempts]. That bounds guessing to 10 tries in
	// 10 minutes against codes of 2^40 values, whoever asks (the admin
	// endpoint, an owner's /approve, the CLI).
	MaxWrongPairingGuesses = 10
	// PairingGuessWindow is the window of MaxWrongPairingGuesses.
	PairingGuessWindow = 10 * time.Minute
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
	// ErrTooManyAttempts: too many wrong pairing codes were tried
	// recently; approvals are refused for a while.
	ErrTooManyAttempts = errors.New("too many wrong pairing codes; try again later")
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
	Leases
	Schedules
	Ledger
	AuditTrail
	History
	ToolResults
	// Close waits for the writes in flight, then releases the storage.
	// Calling it again returns nil. After Close, writes fail with
	// [ErrClosed] and reads fail with an error.
	Close() error
}
