package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/clawhost/clawhost/core/store"
)

// migrations are applied in order; the database's user_version pragma is
// the number applied so far. Append only: never edit a released step.
// Times are Unix nanoseconds (0 = unset).
var migrations = []string{
	// 1: journal, dedupe, outbox, sessions, pairing.
	`
CREATE TABLE journal (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	instance    TEXT    NOT NULL,
	chat_id     TEXT    NOT NULL,
	thread_id   TEXT    NOT NULL DEFAULT '',
	message_id  TEXT    NOT NULL DEFAULT '',
	dedupe_key  TEXT    NOT NULL DEFAULT '',
	received_at INTEGER NOT NULL,
	message     BLOB,
	state       TEXT    NOT NULL,
	session_key TEXT    NOT NULL DEFAULT '',
	attempts    INTEGER NOT NULL DEFAULT 0,
	reason      TEXT    NOT NULL DEFAULT '',
	updated_at  INTEGER NOT NULL
);
-- Unfinished entries (recovery) and the per-session queue stay small
-- however long the journal grows: both are partial indexes.
CREATE INDEX journal_open ON journal(id) WHERE state NOT IN ('done', 'dropped', 'failed');
CREATE INDEX journal_pending ON journal(session_key, id) WHERE state = 'queued';
CREATE INDEX journal_finished ON journal(updated_at) WHERE state IN ('done', 'dropped', 'failed');

CREATE TABLE dedupe (
	key        TEXT    PRIMARY KEY,
	journal_id INTEGER NOT NULL,
	seen_at    INTEGER NOT NULL
);
CREATE INDEX dedupe_seen ON dedupe(seen_at);

CREATE TABLE replies (
	journal_id  INTEGER PRIMARY KEY,
	instance    TEXT    NOT NULL,
	chat_id     TEXT    NOT NULL,
	thread_id   TEXT    NOT NULL DEFAULT '',
	text        TEXT    NOT NULL,
	produced_at INTEGER NOT NULL,
	chunks      INTEGER NOT NULL
);
CREATE TABLE reply_chunks (
	journal_id   INTEGER NOT NULL,
	idx          INTEGER NOT NULL,
	text         TEXT    NOT NULL,
	sent_at      INTEGER NOT NULL DEFAULT 0,
	platform_ids TEXT    NOT NULL DEFAULT '',
	PRIMARY KEY (journal_id, idx)
) WITHOUT ROWID;

CREATE TABLE sessions (
	key                TEXT    PRIMARY KEY,
	session_id         TEXT    NOT NULL DEFAULT '',
	claude_session_id  TEXT    NOT NULL DEFAULT '',
	created_at         INTEGER NOT NULL,
	updated_at         INTEGER NOT NULL,
	last_message_at    INTEGER NOT NULL DEFAULT 0,
	turns              INTEGER NOT NULL DEFAULT 0,
	input_tokens       INTEGER NOT NULL DEFAULT 0,
	output_tokens      INTEGER NOT NULL DEFAULT 0,
	cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
	cache_create_tokens INTEGER NOT NULL DEFAULT 0,
	cost_usd           REAL    NOT NULL DEFAULT 0,
	model              TEXT    NOT NULL DEFAULT '',
	chat               BLOB,
	target_instance    TEXT    NOT NULL DEFAULT '',
	target_chat_id     TEXT    NOT NULL DEFAULT '',
	target_thread_id   TEXT    NOT NULL DEFAULT '',
	verbose            INTEGER NOT NULL DEFAULT 0,
	abort_hint         INTEGER NOT NULL DEFAULT 0,
	memory_flush_cycle INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE pairing_codes (
	instance   TEXT    NOT NULL,
	sender_id  TEXT    NOT NULL,
	code       TEXT    NOT NULL UNIQUE,
	created_at INTEGER NOT NULL,
	expires_at INTEGER NOT NULL,
	PRIMARY KEY (instance, sender_id)
);
CREATE TABLE approved_senders (
	instance    TEXT    NOT NULL,
	sender_id   TEXT    NOT NULL,
	approved_at INTEGER NOT NULL,
	PRIMARY KEY (instance, sender_id)
) WITHOUT ROWID;
`,
	// 2: send attempts and uncertain chunks, the reply's send options and
	// draft, and the live output of running turns.
	`
ALTER TABLE reply_chunks ADD COLUMN attempted_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE reply_chunks ADD COLUMN uncertain INTEGER NOT NULL DEFAULT 0;
ALTER TABLE replies ADD COLUMN format TEXT NOT NULL DEFAULT '';
ALTER TABLE replies ADD COLUMN reply_to TEXT NOT NULL DEFAULT '';
ALTER TABLE replies ADD COLUMN draft_id TEXT NOT NULL DEFAULT '';
CREATE TABLE live_output (
	journal_id   INTEGER NOT NULL,
	seq          INTEGER NOT NULL,
	kind         TEXT    NOT NULL,
	text         TEXT    NOT NULL,
	platform_ids TEXT    NOT NULL DEFAULT '',
	PRIMARY KEY (journal_id, seq)
) WITHOUT ROWID;
`,
	// 3: wrong pairing-code guesses (bounded guessing).
	`
CREATE TABLE pairing_guesses (
	at INTEGER NOT NULL
);
`,
	// 4: leases (one host holds a SQLite database, but the core asks for
	// its host and channel leases on every engine alike).
	`
CREATE TABLE leases (
	name        TEXT    PRIMARY KEY,
	holder      TEXT    NOT NULL,
	info        TEXT    NOT NULL DEFAULT '',
	epoch       INTEGER NOT NULL,
	acquired_at INTEGER NOT NULL,
	renewed_at  INTEGER NOT NULL,
	expires_at  INTEGER NOT NULL
) WITHOUT ROWID;
`,
	// 5: the host that owns an open journal entry.
	`
ALTER TABLE journal ADD COLUMN owner TEXT NOT NULL DEFAULT '';
`,
	// 6: the journal's indexes no longer name the state. Each of the three
	// partial indexes on state was maintained by every state change of an
	// entry (accepted → processing → replied → done: SQLite re-evaluates
	// an index whose WHERE reads a column the UPDATE sets): ~55 µs of the
	// single writer's time per message, measured. finished_at (0 while
	// the entry is open, the time it reached a terminal state after) is
	// written only at the end, so only the message's route to a session
	// (session_key) and its end touch an index.
	`
ALTER TABLE journal ADD COLUMN finished_at INTEGER NOT NULL DEFAULT 0;
UPDATE journal SET finished_at = max(updated_at, 1) WHERE state IN ('done', 'dropped', 'failed');
DROP INDEX journal_open;
DROP INDEX journal_pending;
DROP INDEX journal_finished;
CREATE INDEX journal_live ON journal(session_key, id) WHERE finished_at = 0;
CREATE INDEX journal_done ON journal(finished_at) WHERE finished_at > 0;
`,
	// 7: what is written once leaves the rows that change. SQLite rewrites
	// a row whole on every UPDATE (its overflow pages too), so an entry's
	// message (the normalized inbound: hundreds of bytes, up to MBs) was
	// copied again by each state change of the entry (routed, replied,
	// done), and a chunk's text by its send attempt and its send: bytes
	// copied and pages dirtied on the single writer, and written to the
	// WAL again at each commit. Each is now written once, beside its row
	// (BenchmarkPipelineLong, 3.7 KB messages and 1.9 KB replies: ×2.5
	// messages a second).
	`
CREATE TABLE journal_messages (
	id      INTEGER PRIMARY KEY,
	message BLOB
);
INSERT INTO journal_messages(id, message) SELECT id, message FROM journal WHERE message IS NOT NULL;
UPDATE journal SET message = NULL WHERE message IS NOT NULL;
CREATE TABLE chunk_texts (
	journal_id INTEGER NOT NULL,
	idx        INTEGER NOT NULL,
	text       TEXT    NOT NULL,
	PRIMARY KEY (journal_id, idx)
);
INSERT INTO chunk_texts(journal_id, idx, text) SELECT journal_id, idx, text FROM reply_chunks;
UPDATE reply_chunks SET text = '' WHERE text <> '';
`,
	// 8: who approved a sender (pairing list -approved).
	`
ALTER TABLE approved_senders ADD COLUMN approved_by TEXT NOT NULL DEFAULT '';
`,
	// 9: the schedules added from chat and by the agent, and the last run
	// of every scheduled job (until now data_dir/schedules.json and
	// schedule.json; the host moves them in once).
	`
CREATE TABLE schedules (
	id       INTEGER PRIMARY KEY AUTOINCREMENT,
	name     TEXT    NOT NULL UNIQUE,
	cron     TEXT    NOT NULL DEFAULT '',
	at       INTEGER NOT NULL DEFAULT 0,
	chat     TEXT    NOT NULL,
	is_group INTEGER NOT NULL DEFAULT 0,
	prompt   TEXT    NOT NULL,
	sender   TEXT    NOT NULL DEFAULT '',
	added_at INTEGER NOT NULL
);
CREATE TABLE schedule_runs (
	job     TEXT    PRIMARY KEY,
	last_at INTEGER NOT NULL
);
`,
	// 10: session keys carry the agent that serves them
	// ("agent:<id>:<key>", sessionkey.Key.String): every session and
	// journal entry made before is the default agent's.
	`
UPDATE sessions SET key = 'agent:main:' || key;
UPDATE journal SET session_key = 'agent:main:' || session_key WHERE session_key != '';
`,
	// 11: the usage ledger: one row per finished turn (store.TurnUsage),
	// written with its reply. One index, on the time: rows arrive in its
	// order (cheap to append), and every query is over a window (a day, a
	// month, 30 days). An index on the sender and one on the chat made
	// RecordReply 1.7× as long (BenchmarkRecordReplyLedger); with the
	// time index alone it is ~1.5× (~190 µs against ~125 µs, medians,
	// sync=FULL), no extra commit or fsync. make bench's table shows both.
	`
CREATE TABLE usage (
	id                    INTEGER PRIMARY KEY AUTOINCREMENT,
	journal_id            INTEGER NOT NULL,
	at                    INTEGER NOT NULL,
	agent                 TEXT    NOT NULL,
	instance              TEXT    NOT NULL,
	chat_id               TEXT    NOT NULL,
	sender                TEXT    NOT NULL,
	model                 TEXT    NOT NULL,
	input_tokens          INTEGER NOT NULL,
	output_tokens         INTEGER NOT NULL,
	cache_read_tokens     INTEGER NOT NULL,
	cache_creation_tokens INTEGER NOT NULL,
	cost_usd              REAL    NOT NULL,
	duration_ns           INTEGER NOT NULL,
	outcome               TEXT    NOT NULL
);
CREATE INDEX usage_at ON usage(at);
`,
	// 12: the audit trail (store.AuditEvent), kept for audit { keep }.
	`
CREATE TABLE audit (
	id       INTEGER PRIMARY KEY AUTOINCREMENT,
	at       INTEGER NOT NULL,
	kind     TEXT    NOT NULL,
	actor    TEXT    NOT NULL,
	instance TEXT    NOT NULL,
	chat_id  TEXT    NOT NULL,
	subject  TEXT    NOT NULL,
	decision TEXT    NOT NULL,
	detail   TEXT    NOT NULL
);
CREATE INDEX audit_at ON audit(at);
CREATE INDEX audit_kind ON audit(kind, at);
`,
	// 13: who asks, with a pairing code (store.PairingCode.SenderName,
	// SenderUsername); "" for the codes made before.
	`
ALTER TABLE pairing_codes ADD COLUMN sender_name TEXT NOT NULL DEFAULT '';
ALTER TABLE pairing_codes ADD COLUMN sender_username TEXT NOT NULL DEFAULT '';
`,
	// 14: a turn's cost is its own (issue 52). claude's total_cost_usd,
	// which the ledger stored as each turn's cost, is the claude
	// session's running total. A row's cost becomes the difference to
	// the previous priced row of its chat when that is not larger (when
	// it is, a new session began in between and the row is its first
	// turn); the ledger has no session id, so a /new between two rows
	// cannot be told apart and every row made before is marked an
	// estimate. A cut turn's row (no cost, its tokens) is priced at the
	// built-in list prices of this release (core/usage.BuiltinPrices).
	// Sessions keep claude's running total of their claude
	// session (store.Session.ClaudeCostUSD) from now on; the earlier sum
	// of running totals a session row has in cost_usd stays (it has no
	// turn-by-turn record to recompute it from).
	`
ALTER TABLE usage ADD COLUMN estimate INTEGER NOT NULL DEFAULT 0;
CREATE TEMP TABLE usage_prev AS
	SELECT id, LAG(cost_usd) OVER (PARTITION BY agent, instance, chat_id ORDER BY at, id) AS prev
	FROM usage WHERE cost_usd > 0;
UPDATE usage SET cost_usd = cost_usd - (SELECT p.prev FROM usage_prev p WHERE p.id = usage.id)
	WHERE EXISTS (SELECT 1 FROM usage_prev p WHERE p.id = usage.id AND p.prev IS NOT NULL AND p.prev <= usage.cost_usd);
DROP TABLE usage_prev;
UPDATE usage SET cost_usd = (input_tokens + 5.0 * output_tokens + 0.1 * cache_read_tokens + 1.25 * cache_creation_tokens) *
	(CASE WHEN model = 'claude-opus-5-5' THEN 4 WHEN model = 'claude-opus-4-5' THEN 5 WHEN model LIKE '%haiku%' THEN 1
		WHEN model LIKE '%sonnet%' THEN 3 ELSE 15 END) / 1000000.0
	WHERE cost_usd = 0 AND outcome != 'ok' AND input_tokens + output_tokens + cache_read_tokens + cache_creation_tokens > 0;
UPDATE usage SET estimate = 1;
ALTER TABLE sessions ADD COLUMN claude_cost_usd REAL NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN claude_cost_of TEXT NOT NULL DEFAULT '';
`,
	// 15: a reply of several messages (store.Reply.Parts): each chunk's
	// own format and attachments, written once beside its text.
	`
ALTER TABLE chunk_texts ADD COLUMN format TEXT NOT NULL DEFAULT '';
ALTER TABLE chunk_texts ADD COLUMN attach BLOB;
`,
	// 16: the results of finished plugin tool calls by idempotency key
	// (store.ToolResults), pruned with the journal entry of their turn.
	`
CREATE TABLE IF NOT EXISTS tool_results (
	key        TEXT    PRIMARY KEY,
	journal_id INTEGER NOT NULL,
	result     BLOB    NOT NULL,
	at         INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS tool_results_journal ON tool_results(journal_id);
`,
	// 17: an attempt that truly began (store.Entry.Began, issue 85): only
	// those spend a message's attempts. A run in processing at the upgrade
	// is taken to have begun, as it was counted before.
	// Launches counts every start (store.MaxLaunches bounds those that
	// never began); an entry's earlier starts are its attempts.
	`
ALTER TABLE journal ADD COLUMN began INTEGER NOT NULL DEFAULT 0;
ALTER TABLE journal ADD COLUMN launches INTEGER NOT NULL DEFAULT 0;
UPDATE journal SET began = 1 WHERE state = 'processing';
UPDATE journal SET launches = attempts;
`,
}

// schemaVersion is the user_version a database has after Open.
var schemaVersion = len(migrations)

// SchemaVersion is the schema version this binary migrates a database to
// (clawhost version prints it): Open refuses a database with a newer one.
func SchemaVersion() int { return schemaVersion }

// migrate brings the schema to schemaVersion: every pending step in one
// transaction, so an interrupted migration leaves the schema as it was and
// a new database costs one commit, not one per step (a fresh data
// directory, the first start of a host: 8.1 ms with a commit per step,
// 6.8 ms with one, medians of 5; most of the rest is the driver's first
// open). A database from a newer binary is refused rather than guessed at.
func migrate(ctx context.Context, conn *sql.Conn) (err error) {
	var v int
	if err := conn.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("read user_version: %w", err)
	}
	if v > len(migrations) {
		return &store.SchemaTooNewError{Engine: "sqlite", Found: v, Known: len(migrations)}
	}
	if v == len(migrations) {
		return nil
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			conn.ExecContext(context.Background(), "ROLLBACK")
		}
	}()
	for i := v; i < len(migrations); i++ {
		if _, err := conn.ExecContext(ctx, migrations[i]); err != nil {
			return fmt.Errorf("step %d: %w", i+1, err)
		}
	}
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(migrations))); err != nil {
		return err
	}
	_, err = conn.ExecContext(ctx, "COMMIT")
	return err
}
