// Package store is the durable state of the clawhost core: the inbound
// journal (which is also the per-session queue), the dedupe keys, the outbox
// of produced replies, the sessions, the pairing codes and approved
// senders, the leases of the hosts sharing a storage, and the schedules
// added at run time with the last run of every scheduled job.
//
// This package is the contract only: the [Store] interface and its parts
// ([Journal], [Outbox], [Sessions], [Pairing], [Leases], [Schedules]),
// their types and errors, and below the guarantees every engine gives.
// The engines live in sub-packages: core/store/sqlite is the embedded one
// (one SQLite database in the data directory), core/store/postgres the
// shared one. Every engine passes the conformance suite
// core/store/storetest, which checks what this documentation promises.
// The package is a leaf: it imports nothing from core/ or sdk/, and no
// database driver. The core defines the normalized message struct; the
// journal stores it as opaque bytes.
//
// # What every engine guarantees
//
// Concurrency: all methods are safe for concurrent use.
//
// Atomicity: every write method is all or none. A call that returns an
// error changed nothing, with two documented exceptions: ApprovePairing
// deletes an expired code and reports [ErrExpired], and Prune may delete
// in several steps and returns how many entries it deleted before the
// error. A failing call does not fail or undo concurrent calls, however the
// engine batches them.
//
// Visibility: a read that starts after a write returned sees that write,
// whichever goroutine made it.
//
// Durability: a write that returned nil survives the death of the process
// at any later instant (kill -9), and a restart of the engine on the same
// storage sees it. This is what lets the core ack a message to the plugin
// after [Journal.Accept]. Whether a write also survives an operating-system
// crash or power loss is the engine's documented trade-off.
//
// Context: a write whose context ends before the write started returns the
// context's error and changes nothing. Once started, the write commits or
// fails as a whole even if the context ends meanwhile; it is never
// half-applied. A caller that got a context error must treat the
// outcome as unknown: for Accept that is harmless, because redelivery by
// the plugin hits the dedupe key.
//
// Time: every stamp a method sets (received, updated, produced, sent,
// created, expires, approved at) and every age it checks (dedupe TTL,
// pairing expiry, [RecoverOptions.StaleAfter]) uses the clock the engine
// was opened with, never the wall clock directly, so tests inject one.
// Times are kept to the nanosecond and come back as the same instant
// (compare with Equal; the location is not kept); the zero time stays zero.
//
// Ids: journal ids are positive and never reused, not even after
// [Journal.Prune]; an Accept that returned before another started has the
// lower id, so id order is arrival order.
//
// Empty results: list methods return nil, not an error, when nothing
// matches; a missing single item is [ErrNotFound].
//
// # The journal state machine
//
// Every inbound message a channel delivers is stored by [Journal.Accept]
// before the core acks it to the plugin. Accept is also the dedupe check:
// the key is the instance, chat id, thread id and platform message id (or an
// explicit [Inbound.DedupeKey]; see [Inbound.Key]); if the key was stored
// within the dedupe TTL ([DefaultDedupeTTL], 24 hours, on the injected
// clock) Accept reports a duplicate and stores nothing. A duplicate was
// durably stored before, so the core acks it too. A key older than the TTL
// is stored again by the next Accept that carries it, which then starts a
// new TTL. Dedupe keys survive a restart. An engine may bound the number of
// keys it keeps, evicting the oldest (first seen) first (core/store/sqlite
// keeps 200,000, about 20 MB); an evicted key no longer catches
// duplicates, so the bound must exceed the messages expected within one TTL
// (200,000 a day is 2.3 messages a second, sustained).
//
// States and their transitions (anything else is [ErrBadTransition]):
//
//	accepted ──Enqueue──▶ queued ──Start──▶ processing ──RecordReply──▶ replied ──MarkSent(last chunk)──▶ done
//	    │                   │                   │                          │
//	    └──Start, Begin─────┼──────────────────▶│                          │
//	    └───────────────────┴──────Finish───────┴──────────Finish──────────┴──▶ done | dropped | failed
//
// The states:
//
//   - accepted: stored and acked; not yet routed (access control, session).
//   - queued: routed to a session (SessionKey set) and waiting in the
//     session's lane. The per-session queue is the set of queued entries of a
//     session in id order ([Journal.ListPending], [Journal.CountPending]);
//     dropping (policy old or new, the caller's decision) is Finish with
//     [StateDropped].
//   - processing: [Journal.Start] commits this state, and increments
//     Attempts, before the runner is started. A message in processing has
//     been handed to claude (or is about to be), and its reply is not stored.
//     [Journal.MarkBegan] marks it [Entry.Began] once claude read the
//     prompt (the runner read claude's first line of the turn); Start
//     clears the mark.
//   - parked: [Journal.Park] moved the entries of a turn that hit claude's
//     usage limit here from processing (giving back the attempt); they wait
//     for the limit's reset, survive restarts (Recover leaves them) and are
//     not pending; [Journal.Unpark] puts every one back in its session's
//     queue, where their ids keep them ahead of what queued behind them.
//   - replied: [Outbox.RecordReply] stored the produced reply and its chunks
//     in the same transaction that left processing. From here on claude is
//     never asked again; only delivery remains. Messages of the same turn
//     (collect mode) listed in [Reply.Covers] go to done in that transaction.
//   - done, dropped, failed: terminal. [Outbox.MarkSent] of the last unsent
//     chunk moves replied to done. A reply with no chunks (NO_REPLY) goes
//     straight to done.
//
// No state ever goes backwards ([State.Rank] never decreases), with two
// exceptions: [Journal.Recover]'s processing back to queued (or to
// accepted, for an entry without a session), and [Journal.Park]'s
// processing to parked (whose Unpark to queued keeps the rank).
//
// # Recovery rules (after a restart, or kill -9 at any moment)
//
// [Journal.Recover] applies these rules atomically (one transaction) and
// returns what the core has to resume. It is idempotent; call it once at
// start-up, before any channel is started.
//
//  1. accepted and queued entries are untouched and returned in
//     [Recovery.Resume], oldest (lowest id, i.e. first received) first. The
//     per-session queue is intact because it lives in the journal.
//  2. replied entries have a produced reply: they go to delivery, never to
//     claude again. [Recovery.Deliver] lists each with its chunks and their
//     delivery state (sent, attempted, uncertain), its format, reply-to and
//     draft, so a delivered chunk is not sent again and an undelivered one
//     is not lost (see "Delivery" below for the one chunk whose fate is
//     unknown). A reply produced more than [RecoverOptions.StaleAfter] ago
//     (default 15 minutes) is not re-sent: the entry becomes failed ("stale
//     reply") and is reported in [Recovery.Stale]; the core tells each chat
//     concerned once.
//  3. processing entries have no stored reply: the run was started but its
//     result was lost. A run that never began ([Entry.Began] false: claude
//     was launched but had not read the prompt) ran nothing: the entry goes
//     back to queued (or accepted) with its attempt given back, until its
//     [Entry.Launches] reach [MaxLaunches]; from then on such a launch
//     counts as a run that began. For a run that began: if Attempts <
//     [RecoverOptions.MaxAttempts] (default 2)
//     the entry goes back to queued (to accepted if it had no session) and
//     is in Resume; the next Start makes it attempt 2. Otherwise it becomes
//     failed ("interrupted") and is reported in [Recovery.Failed]. With the
//     default, a message interrupted mid-run is re-run exactly once and a
//     message interrupted twice is never run again; a message whose reply
//     was produced is never re-run. MaxAttempts = 1 gives strict
//     at-most-once runs (an interrupted turn is reported, not retried).
//     The only way claude sees a message twice is a crash between the end of
//     the run and the commit of RecordReply; Attempts bounds it. (A
//     graceful stop never causes it: the core records a result it holds
//     before it honours the stop.) What the interrupted run showed is in
//     [Outbox.LiveOutput]: the re-run continues its draft (edits the same
//     message), and tells the user the reply starts again when the run had
//     shown blocks or a draft whose send was not confirmed; a run not
//     retried has its draft edited to say it was interrupted.
//
// # Delivery: what the user sees, exactly once or said so
//
// The core's promise, which these records make possible: a message is
// answered once, or the user is told what happened; never silently twice
// and never silently not at all.
//
//   - Everything a turn shows before its reply is recorded is live output
//     ([Outbox.RecordLive]): recorded before it is sent, with its platform
//     ids once the channel answered. The reply records the draft's id
//     ([Reply.DraftID]) and chunk 0 is delivered by editing that draft, also
//     after a restart, never as a second message.
//   - A reply may be several messages (a command plugin's answer: each
//     message with its format, files and buttons): they are one reply's
//     chunks, each with its [Part], recorded together before the first is
//     sent and delivered, resumed and marked like any chunk. Nothing a
//     journal entry answers with is sent without being recorded first.
//   - Every chunk is marked attempted ([Outbox.MarkAttempt]) before its
//     first Send and sent ([Outbox.MarkSent]) when the channel answered;
//     chunk 0's attempt is recorded with the reply ([Reply.AttemptFirst])
//     when its channel is ready, the send following at once. A
//     send is retried only when it certainly did not reach the platform (a
//     refused connection, a 5xx or 429 answer, a plugin not ready).
//   - Ambiguous sends are at most once: when the answer is lost after the
//     request left (a dropped connection, no answer before the deadline, a
//     malformed answer, the plugin's death during the call; the plugin
//     reports channel.CodeUncertain), or when a restart finds a chunk
//     attempted but not marked, the chunk is marked sent with
//     [ChunkSent.Uncertain] and not sent again; the rest of the reply is
//     delivered and the user is told once that a part may be missing.
//     Edits are idempotent and are retried.
//   - A write of the outbox that fails and may pass (a locked database, a
//     full disk) is retried, with backoff, until it succeeds or the host
//     stops: the session's delivery waits for the store rather than drop a
//     produced reply (its entry would stay processing and be run again
//     after the next restart) or leave a sent chunk unmarked.
//   - A reply that cannot be delivered fails its entry and the user is told
//     (unless the chat itself is gone); a stale reply after a restart, a
//     twice-interrupted turn and a dropped message (the queue cap's old or
//     new policy, a message too large for the plugin protocol, pairing
//     slots full) are told in one message.
//
// # Schedules
//
// [Schedules] keeps what /schedule add and the agent's schedule_message
// add, and the last run of every job (the configuration's schedules and
// heartbeat too). A schedule's name is unique: [Schedules.AddSchedule] of
// a stored name is [ErrScheduleExists] and changes nothing. Removing a
// schedule removes its last run with it, so a schedule added later under
// the same name starts afresh. A job's last run only moves forward
// ([Schedules.RecordScheduleRun] of an earlier time keeps the later one):
// several hosts that run the same job (each host of a cluster runs every
// schedule; the journal's dedupe key of a run, its job and due time, makes
// one turn of them) record it without coordination. Schedules come back in
// the order they were added, with their Sender, which is how a revocation
// finds the schedules of the revoked sender.
//
// # Housekeeping
//
// Terminal journal entries, their replies and chunks stay until
// [Journal.Prune] removes those finished before a cutoff. Expired pairing
// codes are removed whenever a new one is requested.
package store
