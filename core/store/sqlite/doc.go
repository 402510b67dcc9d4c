// Package sqlite is the embedded engine of the clawhost store: it
// implements the contract of core/store ([store.Store]) with one SQLite
// database, clawhost.db, in the data directory (pure-Go driver
// modernc.org/sqlite, no cgo). Open it with [Open]; it passes the
// conformance suite core/store/storetest (see sqlite_test.go). This
// documentation covers what the engine adds to the contract: files,
// locking, how writes are committed, and its durability trade-offs.
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
// # Memory when idle
//
// Each connection holds its schema, its prepared statements and its page
// cache in SQLite's C heap (modernc's libc). After [Options.IdleRelease]
// (a minute) without a statement the store closes its idle readers,
// empties the writer's page cache and hands libc's freed regions back to
// the kernel; the first read after that opens a reader again (about
// 0.4 ms, once per idle period). A store that runs a statement every
// minute never does it. WAL and the synchronous settings are untouched.
//
// That is how the contract's context rule holds here: a caller's context
// is honoured until its operation starts executing inside a batch. Once
// started, the operation commits or fails with its batch even if the
// context is cancelled meanwhile, and the call still returns the
// operation's outcome.
//
// # Durability
//
// The database runs in WAL mode. A committed transaction is in the WAL
// file, so every write that returned survives the death of the process at
// any instant (kill -9): that is the contract, and it holds for every
// commit. What an fsync adds is survival of an operating-system crash or
// power loss, and the engine pays it only where something leaves the
// process on the strength of the write (by default, [Options.Synchronous]
// "FULL"):
//
//   - Accept: the plugin acks the message to the platform after it, and the
//     platform never delivers it again. Fsynced.
//   - MarkAttempt, RecordReply with AttemptFirst (chunk 0's attempt
//     recorded with the reply) and RecordLive: a platform send or a draft
//     follows them; after a power loss the restart must know the send may
//     have happened, or the user gets it twice. Fsynced.
//   - Recover, and the pairing codes and approvals (a code shown to a user,
//     an approval an owner was told of). Fsynced.
//   - Everything else (Enqueue, Start, Finish, RecordReply, MarkSent, the
//     sessions, Prune) commits without an fsync. Nothing has left the
//     process on their strength that a restart cannot redo: a lost Enqueue
//     routes the entry again; a lost Start leaves it queued (its run is then
//     the interrupted one, retried once more than MaxAttempts counts); a
//     lost RecordReply runs the turn again, and nothing of it was sent,
//     because the first send waits for a MarkAttempt (or the reply's own
//     AttemptFirst) whose fsync covers the reply; a lost MarkSent leaves its chunk attempted, which a restart
//     treats as uncertain (not sent again; the user is told a part may be
//     missing). A turn's session bookkeeping is written in its reply's
//     transaction ([store.Reply.Session]): lost or kept with the reply, so
//     the turn run again after a lost reply counts itself once.
//
// The connection runs synchronous=NORMAL, so no commit waits for the
// disk; a durable write returns once an fdatasync of the WAL that started
// after its commit returned. The WAL is written in order, so that sync makes
// every earlier commit durable too, and a power loss can only roll back a
// suffix of unsynced commits. The syncs run on a goroutine of their own
// while the writer commits the next batches (they do not wait behind a
// sync), and one sync serves every durable write committed while the
// previous one ran. The accept is the one durable write on the path from
// a platform message to claude's stdin, and that path does not wait for
// its fsync: [DB.AcceptEarly] returns at the commit (the writer tells its
// caller before it hands the fsync to the syncer, so on one processor the
// message goes on first), the core routes the message and starts its turn
// while the fsync runs, and acks the plugin once it returned (one fsync
// for every message committed with it). A power loss before that fsync
// rolls the message back before anything left the process on its
// strength (a send waits for a later fsync, which covers it); the
// platform, never acked, sends it again and its turn runs again, as after
// a kill -9 mid-turn. A delivered reply has one fsync (its first send
// attempt's, recorded with the reply when the channel is ready). [Options.Synchronous] = "NORMAL" drops the fsyncs
// too (they then happen at checkpoints only): an acked message may then be
// lost in a power loss unless the platform redelivers it. Choose it only
// for slow disks.
//
// # Storage
//
// Times are stored as Unix nanoseconds (0 for the zero time), so they keep
// the contract's nanosecond precision. Journal ids are allocated by the
// writer (not by SQLite) so that Accept can store the dedupe key before the
// entry; AUTOINCREMENT and the writer's counter keep them from ever being
// reused. The dedupe table keeps at most [Options.DedupeMax] keys
// ([DefaultDedupeMax]), oldest pruned first, at the commit that passes the
// cap. What is written once and never changed is kept out of the rows whose
// state changes: an entry's message is in journal_messages and a reply
// chunk's text in chunk_texts, beside the journal and reply_chunks rows
// that each state change rewrites whole (SQLite copies a whole row, its
// overflow pages too, on every UPDATE).
//
// # Schema
//
// The schema is migrated on Open, every pending step in one transaction
// (all or none), and the database's user_version records the steps
// applied. A database written by a newer binary (a higher user_version) is
// refused rather than guessed at.
package sqlite
