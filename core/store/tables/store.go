package tables

import (
	"context"
	"time"
)

// Engine is what an engine hands the methods written once ([Store]): its
// reads, its writes, its clock and the few names its schema spells its
// own way.
type Engine struct {
	// Read is a reader for one call; adhoc says the query's text changes
	// from call to call (a filter's WHERE), which SQLite runs unprepared so
	// that its statement cache keeps only the constant queries.
	Read func(ctx context.Context, adhoc bool) Reader
	// Write runs fn as one write of the kind w.
	Write func(ctx context.Context, w Write, fn func(Tx) error) error
	// Start moves the entries ids to processing, all or none, and to the
	// session sessionKey unless it is "" (Start and Begin).
	Start func(ctx context.Context, sessionKey string, ids []int64) error
	// Now is the engine's clock.
	Now func() time.Time
	// Host is this host's id, stamped as an entry's owner.
	Host string
	// MaxPendingPairings bounds an instance's live pairing codes.
	MaxPendingPairings int
	// Journal and Sessions are the tables as the engine's schema spells
	// them (NewJournal, NewSessions).
	Journal  Journal
	Sessions Sessions
	// ShareLock is appended to the read of a row that must hold back a
	// concurrent writer of it until this write commits: PostgreSQL's
	// " FOR SHARE"; SQLite's single writer needs none.
	ShareLock string
}

// Write says how an engine runs a write of the row layer; each engine
// reads the fields that concern it.
type Write struct {
	// Durable: SQLite syncs the write to disk before the call returns (a
	// send, or a person waiting on it, follows).
	Durable bool
	// Single: the write is one statement (and at most a read that
	// explains a refusal): PostgreSQL runs it without BEGIN and COMMIT.
	Single bool
	// Serialized: the writes of this kind run one at a time across hosts
	// (pairing's, which count a stable view): PostgreSQL takes an advisory
	// lock first; SQLite has one writer anyway.
	Serialized bool
}

var (
	plain   = Write{}
	durable = Write{Durable: true}
)

// Store is the store's methods written once on the row layer: an engine
// embeds it (NewStore) and defines the rest, and may define one of these
// again (SQLite's Session reads its cache first).
type Store struct{ e Engine }

// NewStore is the methods of Store on e.
func NewStore(e Engine) Store { return Store{e} }

// read is a reader of constant queries for one call.
func (s Store) read(ctx context.Context) Reader { return s.e.Read(ctx, false) }

// adhoc is a reader of queries whose text changes with their filter.
func (s Store) adhoc(ctx context.Context) Reader { return s.e.Read(ctx, true) }
