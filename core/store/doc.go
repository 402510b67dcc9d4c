// Package store is the durable state of the clawhost core: the inbound
// journal (which is also the per-session queue), the dedupe keys, the outbox
// of produced replies, the sessions and the pairing codes and approved
// senders.
//
// The embedded implementation, [DB], is one SQLite database
// (clawhost.db, pure-Go driver modernc.org/sqlite) in the data directory.
// The rest of the core sees it through the [Journal], [Outbox], [Sessions]
// and [Pairing] interfaces (together [Store]) so that a shared SQL server can
// replace it later. The package is a leaf: it imports nothing from core/ or
// sdk/. The core defines the normalized message struct; the journal stores it
// as opaque bytes.
//
// # Files and locking
//
// [Open] creates the data directory with mode 0700 and the database files
// with mode 0600, and tightens both when an existing directory or file is
// more permissive (SQLite creates the -wal and -shm files with the mode of
// the main file). It takes an exclusive flock on clawhost.db.lock, so a second
// process on the same directory fails fast instead of interleaving writes.
//
// # Writes: one writer, group commit
//
// Every write goes through a single writer goroutine that owns the only
// read-write connection. Concurrent calls are batched into one transaction
// (BEGIN IMMEDIATE … COMMIT); each caller returns only after the batch that
// contains its change has committed. A failing operation does not take its
// batch down: the batch is rolled back and its operations are re-run one
// transaction each, so every caller gets its own result. Reads use a
// separate pool of query-only connections and, thanks to WAL, never wait for
// the writer; a read issued after a write returned sees that write.
//
// A caller's context is honoured until its operation starts executing inside
// a batch. Once started, the operation commits or fails with its batch even
// if the context is cancelled meanwhile; the call then still returns the
// operation's outcome. Operations are therefore never half-applied, but a
// caller that gave up waiting (ctx error) must treat the outcome as unknown:
// for Accept that is harmless, because redelivery by the plugin hits the
// dedupe key.
//
// # Durability
//
// The database runs in WAL mode with synchronous=FULL by default: every
// commit fsyncs the WAL, so an acked message survives the death of the
// process at any instant (kill -9) and also an operating-system crash or
// power loss. Group commit pays that fsync once per batch, not per message;
// BenchmarkAcceptParallel shows FULL within about 15% of NORMAL and above the
// 20,000 messages/s goal. [Options.Synchronous] = "NORMAL" drops the fsync
// per commit (fsyncs happen at checkpoints only): still safe against a
// process crash, because a committed transaction is in the WAL file, but
// after an OS crash or power loss the last transactions may roll back (the
// database stays consistent); an acked message is then lost unless the
// platform redelivers it. Choose NORMAL only for slow disks.
//
// # The journal state machine
//
// Every inbound message a channel delivers is stored by [Journal.Accept]
// before the core acks it to the plugin. Accept is also the dedupe check:
// the key is the instance, chat id, thread id and platform message id (or an
// explicit [Inbound.DedupeKey]); if the key was seen within the dedupe TTL
// (default 20 minutes, injected clock) Accept reports a duplicate and stores
// nothing. A duplicate was durably stored before, so the core acks it too.
// The dedupe table keeps at most 5000 keys (oldest pruned first) and
// survives a restart.
//
// States and their transitions (anything else is [ErrBadTransition]):
//
//	accepted ──Enqueue──▶ queued ──Start──▶ processing ──RecordReply──▶ replied ──MarkSent(last chunk)──▶ done
//	    │                   │                   │                          │
//	    └──Start────────────┼──────────────────▶│                          │
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
//   - replied: [Outbox.RecordReply] stored the produced reply and its chunks
//     in the same transaction that left processing. From here on claude is
//     never asked again; only delivery remains. Messages of the same turn
//     (collect mode) listed in [Reply.Covers] go to done in that transaction.
//   - done, dropped, failed: terminal. [Outbox.MarkSent] of the last unsent
//     chunk moves replied to done. A reply with no chunks (NO_REPLY) goes
//     straight to done.
//
// No state ever goes backwards, with one exception, made only by
// [Journal.Recover]: processing back to queued.
//
// # Recovery rules (after a restart, or kill -9 at any moment)
//
// [Journal.Recover] applies these rules in one transaction and returns what
// the core has to resume. It is idempotent; call it once at start-up, before
// any channel is started.
//
//  1. accepted and queued entries are untouched and returned in
//     [Recovery.Resume], oldest (lowest id, i.e. first received) first. The
//     per-session queue is intact because it lives in the journal.
//  2. replied entries have a produced reply: they go to delivery, never to
//     claude again. [Recovery.Deliver] lists each with its chunks and which
//     chunks already have platform message ids, so a delivered chunk is not
//     sent again and an undelivered one is not lost. A chunk whose Send
//     succeeded but whose MarkSent was lost in the crash is re-sent: delivery
//     is at-least-once per chunk, with a window of one Send.
//     A reply produced more than [RecoverOptions.StaleAfter] ago (default
//     15 minutes) is not re-sent: the entry becomes failed ("stale reply")
//     and is reported in [Recovery.Stale] so the core can log it or tell the
//     user briefly.
//  3. processing entries have no stored reply: the run was started but its
//     result was lost. If Attempts < [RecoverOptions.MaxAttempts] (default 2)
//     the entry goes back to queued (to accepted if it had no session) and
//     is in Resume; the next Start makes it attempt 2. Otherwise it becomes
//     failed ("interrupted") and is reported in [Recovery.Failed]. With the
//     default, a message interrupted mid-run is re-run exactly once and a
//     message interrupted twice is never run again; a message whose reply
//     was produced is never re-run. MaxAttempts = 1 gives strict
//     at-most-once runs (an interrupted turn is reported, not retried).
//     The only way claude sees a message twice is a crash between the end of
//     the run and the commit of RecordReply; Attempts bounds it.
//
// # Housekeeping
//
// Terminal journal entries, their replies and chunks stay until
// [Journal.Prune] removes those finished before a cutoff. Expired pairing
// codes are removed whenever a new one is requested.
package store
