// Package postgres is the PostgreSQL engine of the store contract
// (core/store), for several clawhost hosts sharing one database
// (storage { engine = "postgres", url = env("…") }). It passes the
// contract's conformance suite (core/store/storetest) unchanged, against a
// real server the tests start (core/store/postgres/pgtest).
//
// # How it keeps the contract
//
// Atomicity: a write is one statement where it can be (Accept, Enqueue,
// MarkAttempt, Finish with From: no BEGIN and COMMIT round trips) and one
// transaction otherwise; an error rolls the transaction back whole.
// Serialization failures and deadlocks are retried.
//
// Concurrency between hosts: every rule is held by the database, never by
// a lock in one process. Accept stores the dedupe key and the entry in one
// statement (INSERT … ON CONFLICT on the key): of concurrent Accepts with
// one key on any hosts exactly one stores. Writes that read before they
// write lock what they read: MarkSent locks the entry, so the marks of one
// reply's chunks are taken one after another and the last one sees the
// others; UpdateSession locks the session row (a new session is inserted
// only if nobody did meanwhile, else fn runs again on the stored one);
// RecordLive holds the entry FOR SHARE so RecordReply waits for it; the
// pairing writes take one advisory lock (they count codes and guesses);
// migrations take another, so hosts starting together migrate once.
//
// Durability: a write returns after its commit, which PostgreSQL makes
// durable as the server is configured (synchronous_commit = on, its
// default, waits for the WAL flush; with a synchronous standby, for the
// standby too). clawhost does not change the setting: it is the
// operator's trade-off, as the disk is for SQLite.
//
// Context: a write whose context ended before it started changes nothing;
// once started it no longer follows the caller's context (it is never
// half-applied because a caller gave up) and is bounded by
// Options.WriteTimeout instead.
//
// Ids come from a sequence (journal_ids): positive, never reused, and an
// Accept that returned before another started has the lower id. Gaps are
// normal (a duplicate consumes a number).
//
// Times are stored as Unix nanoseconds in BIGINT columns, as in the
// SQLite engine: timestamptz keeps microseconds, and the contract promises
// the instant back to the nanosecond.
//
// Dedupe keys are not capped (the server's disk is the bound); Prune also
// deletes the keys whose TTL has passed, which catch nothing any more.
//
// # Secrets
//
// The url usually carries a password. Open's errors never contain it;
// [Redact] is what the status page and the logs show.
package postgres
