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
// That is how the contract's context rule holds here: a caller's context
// is honoured until its operation starts executing inside a batch. Once
// started, the operation commits or fails with its batch even if the
// context is cancelled meanwhile, and the call still returns the
// operation's outcome.
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
// # Storage
//
// Times are stored as Unix nanoseconds (0 for the zero time), so they keep
// the contract's nanosecond precision. Journal ids are allocated by the
// writer (not by SQLite) so that Accept can store the dedupe key before the
// entry; AUTOINCREMENT and the writer's counter keep them from ever being
// reused. The dedupe table keeps at most [Options.DedupeMax] keys
// ([DefaultDedupeMax]), oldest pruned first, at the commit that passes the
// cap.
//
// # Schema
//
// The schema is migrated on Open, one transaction per step, and the
// database's user_version records the steps applied. A database written by
// a newer binary (a higher user_version) is refused rather than guessed at.
package sqlite
