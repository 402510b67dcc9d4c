package store

import (
	"context"
	"strings"
	"time"
)

// State is the state of a journal entry. See the package documentation for
// the state machine.
type State string

// Journal states.
const (
	StateAccepted   State = "accepted"   // stored, not routed yet
	StateQueued     State = "queued"     // waiting in its session's lane
	StateProcessing State = "processing" // the runner was (being) started
	StateParked     State = "parked"     // its turn hit claude's usage limit; waits for the reset
	StateReplied    State = "replied"    // reply stored in the outbox, delivering
	StateDone       State = "done"       // terminal: handled
	StateDropped    State = "dropped"    // terminal: dropped on purpose (queue policy, access, abort)
	StateFailed     State = "failed"     // terminal: could not be handled
)

// Terminal reports whether no transition leaves s.
func (s State) Terminal() bool {
	return s == StateDone || s == StateDropped || s == StateFailed
}

// Rank orders the states along the state machine: accepted 0, queued and
// parked 1, processing 2, replied 3, the terminal states 4, an unknown
// state -1. No transition lowers an entry's rank except [Journal.Recover]'s
// processing → queued (or accepted) and [Journal.Park]'s processing →
// parked.
func (s State) Rank() int {
	switch s {
	case StateAccepted:
		return 0
	case StateQueued, StateParked:
		return 1
	case StateProcessing:
		return 2
	case StateReplied:
		return 3
	case StateDone, StateDropped, StateFailed:
		return 4
	}
	return -1
}

// Journal is the inbound journal and per-session queue. Its state machine
// and recovery rules are in the package documentation.
type Journal interface {
	// Accept stores an inbound message as accepted, unless its dedupe key
	// ([Inbound.Key]) was stored within the dedupe TTL; then it stores
	// nothing and reports Duplicate. Checking and storing the key is atomic:
	// of concurrent Accepts with one key exactly one stores. Accept returns
	// only once the message is durable (the core acks it to the plugin
	// then, in both cases), so it blocks for a commit. Instance and ChatID
	// are required.
	Accept(ctx context.Context, in Inbound) (AcceptResult, error)
	// Entry returns one journal entry in any state, or ErrNotFound (never
	// stored, or pruned). The pipeline gets its work from Recover and
	// ListPending; the holder of a channel reads the entry a relayed
	// download names to check the ref is that entry's. It is also the one
	// read of an entry in any state, including the terminal ones, with its
	// Reason and Attempts: the conformance suite and the crash test check
	// the state machine with it.
	Entry(ctx context.Context, id int64) (Entry, error)
	// Enqueue routes an entry to a session's queue (accepted → queued).
	// Enqueueing a queued entry again changes its session key. An empty
	// session key is an error; an entry in another state is
	// ErrBadTransition, a missing one ErrNotFound.
	Enqueue(ctx context.Context, id int64, sessionKey string) error
	// Amend replaces the stored message of an accepted entry (accepted →
	// accepted), atomically and durably: the arrival stage records there
	// what the message_received hooks decided before it acts on it, so a
	// restart resumes with the decision and never asks them again. An
	// entry in another state is ErrBadTransition (once routed, the message
	// is what the queue and the turn read), a missing one ErrNotFound.
	Amend(ctx context.Context, id int64, message []byte) error
	// Start marks entries as handed to the runner (accepted|queued →
	// processing) and increments their Attempts, all or none: one id that
	// cannot move (ErrBadTransition, ErrNotFound) leaves every entry
	// unchanged. No ids is a no-op. Call it, and let it return, before
	// starting claude.
	Start(ctx context.Context, ids ...int64) error
	// Begin is Enqueue and Start in one write: it routes entries to a
	// session and marks them handed to the runner (accepted|queued →
	// processing, SessionKey set, Attempts incremented), all or none, for
	// a turn that starts at once. Recover treats them as Start's (back to
	// queued in that session). An empty session key is an error; no ids
	// is a no-op.
	Begin(ctx context.Context, sessionKey string, ids ...int64) error
	// MarkBegan records that the run Start (or Begin) handed to claude
	// truly began: claude read the prompt (the runner read claude's first
	// line of the turn). It sets [Entry.Began] on the entries still in
	// processing and owned by this host, and leaves the others as they
	// are without an error (the mark may come after the turn ended, or
	// after another host adopted the entry). Start and Begin clear it.
	// Recover spends an attempt only on a run that began: an interrupted
	// run that did not is queued again with its attempt given back.
	MarkBegan(ctx context.Context, ids ...int64) error
	// Finish moves entries to a terminal state, all or none. Finishing an
	// entry that already is in that state is a no-op; any other terminal
	// state is ErrBadTransition. A non-terminal req.State is an error; no
	// ids is a no-op. With req.From set, only the entries in that state
	// move (see [FinishRequest.From]).
	Finish(ctx context.Context, req FinishRequest) error
	// ListPending returns up to limit (≤ 0: all) queued entries of a
	// session, oldest (lowest id) first. Nil when nothing is pending.
	ListPending(ctx context.Context, sessionKey string, limit int) ([]Entry, error)
	// Park moves the entries of a turn that hit claude's usage limit from
	// processing to parked, all or none, and gives back the attempt its
	// run took (it never reached claude's answer): they wait for the
	// limit's reset, are not pending (ListPending, CountPending), and
	// Recover leaves them parked. An entry in another state is
	// ErrBadTransition; no ids is a no-op.
	Park(ctx context.Context, ids ...int64) error
	// Unpark moves every parked entry back to its session's queue (parked
	// → queued: their ids keep them ahead of what queued behind them) and
	// returns their session keys, each once, in id order of their first
	// entry. Nil when none was parked.
	Unpark(ctx context.Context) ([]string, error)
	// CountPending returns the number of queued entries of a session.
	CountPending(ctx context.Context, sessionKey string) (int, error)
	// PendingCounts returns the number of queued entries per session key;
	// sessions with none are absent.
	PendingCounts(ctx context.Context) (map[string]int, error)
	// ListUnfinished returns non-terminal entries with id > afterID, oldest
	// first, up to limit (≤ 0: all). The daemon does not call it; the
	// gateway's tests and the crash test use it to see every open entry.
	ListUnfinished(ctx context.Context, afterID int64, limit int) ([]Entry, error)
	// Recover applies the recovery rules of the package documentation,
	// atomically, and returns what is left to do. Call it once at start-up,
	// before channels start; it is idempotent.
	//
	// With several hosts on one storage it takes only the open entries no
	// live host owns: its own host's, those without an owner, and those
	// whose owner's host lease (HostLeasePrefix + owner) is missing or
	// expired; it makes itself their owner in the same transaction. So a
	// host's restart never re-runs another live host's turn or resends its
	// reply, and of hosts recovering at once each orphan goes to one. Call
	// it again while running to adopt what a dead host left.
	Recover(ctx context.Context, opts RecoverOptions) (Recovery, error)
	// Prune deletes terminal entries last updated before the cutoff, with
	// their replies and chunks, and returns how many entries it deleted.
	// Open entries are never pruned. An engine may delete in several
	// transactions; each deleted entry goes with its reply and chunks.
	// Dedupe keys are not pruned here (they expire on their own).
	Prune(ctx context.Context, before time.Time) (int, error)
}

// HostLeasePrefix names the lease that says a host is alive: a host whose
// id is h holds "host/h" while it runs (see [Leases]).
const HostLeasePrefix = "host/"

// Inbound is a message as received from a channel plugin.
type Inbound struct {
	// Instance is the plugin instance name (the label of its plugin block).
	Instance string
	// ChatID is the platform chat the message came from. Required.
	ChatID string
	// ThreadID is the thread or topic within the chat; empty for none.
	ThreadID string
	// MessageID is the platform message id; part of the dedupe key.
	MessageID string
	// DedupeKey overrides the key derived from Instance, ChatID, ThreadID
	// and MessageID. If both it and MessageID are empty the message is not
	// deduplicated.
	DedupeKey string
	// ReceivedAt is when the core received it; zero means now (the
	// engine's clock).
	ReceivedAt time.Time
	// Message is the normalized message, opaque to the store (JSON).
	Message []byte
}

// Key returns the dedupe key of in: DedupeKey if set, else Instance,
// ChatID, ThreadID and MessageID joined; empty (not deduplicated) if in has
// neither a DedupeKey nor a MessageID. Engines store it as
// [Entry.DedupeKey].
func (in Inbound) Key() string {
	if in.DedupeKey != "" {
		return in.DedupeKey
	}
	if in.MessageID == "" {
		return ""
	}
	// \x1f (unit separator) cannot be confused with the ids' characters
	// the way ':' could.
	return strings.Join([]string{in.Instance, in.ChatID, in.ThreadID, in.MessageID}, "\x1f")
}

// AcceptResult is the outcome of [Journal.Accept].
type AcceptResult struct {
	// ID is the new entry's id; for a duplicate, the id of the entry that
	// first carried the key (it may have been pruned since). Ids are
	// positive, never reused (not even after Prune), and an Accept that
	// returned before another started has the lower id.
	ID int64
	// Duplicate reports that the key was seen within the TTL and nothing
	// was stored.
	Duplicate bool
}

// EarlyAcceptor is a Journal whose commit survives the death of the
// process before it survives an operating-system crash or power loss (an
// engine that fsyncs after committing, as core/store/sqlite does).
type EarlyAcceptor interface {
	// AcceptEarly is Journal.Accept returning once the message is
	// committed, before it is durable against a power loss: the core may
	// route and run it meanwhile, and acks it to the plugin only once
	// synced returned nil. synced returns the fsync's error, after which
	// the commit is visible but may not survive a power loss (the caller
	// nacks; the redelivery is a duplicate, acked after a sync that
	// worked). synced is never nil when err is nil.
	AcceptEarly(ctx context.Context, in Inbound) (res AcceptResult, synced func() error, err error)
}

// AcceptEarly is j's EarlyAcceptor.AcceptEarly when it has one, else
// j.Accept with a synced that returns nil (its commit is durable when
// Accept returns).
func AcceptEarly(ctx context.Context, j Journal, in Inbound) (AcceptResult, func() error, error) {
	if e, ok := j.(EarlyAcceptor); ok {
		return e.AcceptEarly(ctx, in)
	}
	res, err := j.Accept(ctx, in)
	return res, func() error { return nil }, err
}

// Entry is a stored journal entry.
type Entry struct {
	// ID is the id Accept returned.
	ID int64
	// Instance, ChatID, ThreadID, MessageID, ReceivedAt and Message are
	// the accepted [Inbound]'s (ReceivedAt defaulted to the accept time).
	Instance   string
	ChatID     string
	ThreadID   string
	MessageID  string
	ReceivedAt time.Time
	Message    []byte
	// DedupeKey is the accepted Inbound's [Inbound.Key]; empty for none.
	DedupeKey string
	// State is the entry's place in the state machine.
	State State
	// SessionKey is set by Enqueue; empty while accepted.
	SessionKey string
	// Attempts counts the Starts, i.e. the runs handed to claude, less
	// those given back: a run that never began (Recover) or hit a usage
	// limit (Park).
	Attempts int
	// Began: the current run began, claude read the prompt
	// ([Journal.MarkBegan]); Start and Begin clear it.
	Began bool
	// Launches counts every Start and Begin, given back or not (see
	// [MaxLaunches]).
	Launches int
	// Reason says why an entry was dropped or failed; may be empty.
	Reason string
	// Owner is the host that last accepted, routed, started, replied to
	// or recovered the entry (the engine's host id; "" for an engine
	// opened without one). See [Journal.Recover] for what it protects.
	Owner string
	// UpdatedAt is when the entry last changed state.
	UpdatedAt time.Time
}

// FinishRequest moves entries to a terminal state.
type FinishRequest struct {
	// IDs are the entries to finish, all or none.
	IDs []int64
	// State is StateDone, StateDropped or StateFailed.
	State State
	// Reason is kept with the entry (e.g. "queue full", "not allowed").
	Reason string
	// From, when set, restricts the request to the entries still in that
	// state: the others are left as they are, without an error. The queue
	// cap drops with From = StateQueued, so an entry a lane started in the
	// meantime is never dropped under its running turn.
	From State
}

// RecoverOptions tune [Journal.Recover].
type RecoverOptions struct {
	// StaleAfter: replies produced longer ago are not re-sent. Zero means
	// DefaultStaleAfter.
	StaleAfter time.Duration
	// MaxAttempts: an interrupted run that began ([Entry.Began]) is
	// retried while Attempts is below it; one that did not is retried
	// without spending an attempt. Zero means DefaultMaxAttempts; 1 means
	// never retry a run that began.
	MaxAttempts int
	// Adopt takes only what other, dead hosts left (owner set, not this
	// host, its host lease expired): the call a running host makes
	// periodically, which must not touch its own live turns.
	Adopt bool
}

// Recovery is what [Journal.Recover] leaves for the core to do.
type Recovery struct {
	// Resume: accepted and queued entries (including interrupted runs sent
	// back to queued), oldest first. Route the accepted ones; the queued
	// ones are already in their session's queue.
	Resume []Entry
	// Deliver: replies produced but not fully sent, oldest first, with
	// per-chunk delivery state. Send the unsent chunks, in order.
	Deliver []PendingReply
	// Stale: replies older than StaleAfter, now failed, not to be sent.
	Stale []PendingReply
	// Failed: interrupted runs that reached MaxAttempts, now failed.
	Failed []Entry
	// Parked: entries waiting for a usage limit's reset, left as they
	// are (see [Journal.Unpark]).
	Parked []Entry
}
