package postgres

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/clawhost/clawhost/core/store"
)

// migrations are applied in order; clawhost_schema holds the number
// applied so far. Append only: never edit a released step. Times are Unix
// nanoseconds (0 = unset), as in the SQLite engine.
var migrations = []string{
	// 1: journal, dedupe, outbox, live output, sessions, pairing.
	`
CREATE TABLE journal (
	id          BIGINT  PRIMARY KEY,
	instance    TEXT    NOT NULL,
	chat_id     TEXT    NOT NULL,
	thread_id   TEXT    NOT NULL DEFAULT '',
	message_id  TEXT    NOT NULL DEFAULT '',
	dedupe_key  TEXT    NOT NULL DEFAULT '',
	received_at BIGINT  NOT NULL,
	message     BYTEA,
	state       TEXT    NOT NULL,
	session_key TEXT    NOT NULL DEFAULT '',
	attempts    INTEGER NOT NULL DEFAULT 0,
	reason      TEXT    NOT NULL DEFAULT '',
	updated_at  BIGINT  NOT NULL
);
CREATE SEQUENCE journal_ids;
CREATE INDEX journal_open ON journal(id) WHERE state NOT IN ('done', 'dropped', 'failed');
CREATE INDEX journal_pending ON journal(session_key, id) WHERE state = 'queued';
CREATE INDEX journal_finished ON journal(updated_at) WHERE state IN ('done', 'dropped', 'failed');

CREATE TABLE dedupe (
	key        TEXT   PRIMARY KEY,
	journal_id BIGINT NOT NULL,
	seen_at    BIGINT NOT NULL
);
CREATE INDEX dedupe_seen ON dedupe(seen_at);

CREATE TABLE replies (
	journal_id  BIGINT  PRIMARY KEY,
	instance    TEXT    NOT NULL,
	chat_id     TEXT    NOT NULL,
	thread_id   TEXT    NOT NULL DEFAULT '',
	text        TEXT    NOT NULL,
	produced_at BIGINT  NOT NULL,
	chunks      INTEGER NOT NULL,
	format      TEXT    NOT NULL DEFAULT '',
	reply_to    TEXT    NOT NULL DEFAULT '',
	draft_id    TEXT    NOT NULL DEFAULT ''
);
CREATE TABLE reply_chunks (
	journal_id   BIGINT  NOT NULL,
	idx          INTEGER NOT NULL,
	text         TEXT    NOT NULL,
	sent_at      BIGINT  NOT NULL DEFAULT 0,
	platform_ids TEXT    NOT NULL DEFAULT '',
	attempted_at BIGINT  NOT NULL DEFAULT 0,
	uncertain    BOOLEAN NOT NULL DEFAULT false,
	PRIMARY KEY (journal_id, idx)
);
CREATE TABLE live_output (
	journal_id   BIGINT  NOT NULL,
	seq          INTEGER NOT NULL,
	kind         TEXT    NOT NULL,
	text         TEXT    NOT NULL,
	platform_ids TEXT    NOT NULL DEFAULT '',
	PRIMARY KEY (journal_id, seq)
);

CREATE TABLE sessions (
	key                 TEXT    PRIMARY KEY,
	session_id          TEXT    NOT NULL DEFAULT '',
	claude_session_id   TEXT    NOT NULL DEFAULT '',
	created_at          BIGINT  NOT NULL,
	updated_at          BIGINT  NOT NULL,
	last_message_at     BIGINT  NOT NULL DEFAULT 0,
	turns               BIGINT  NOT NULL DEFAULT 0,
	input_tokens        BIGINT  NOT NULL DEFAULT 0,
	output_tokens       BIGINT  NOT NULL DEFAULT 0,
	cache_read_tokens   BIGINT  NOT NULL DEFAULT 0,
	cache_create_tokens BIGINT  NOT NULL DEFAULT 0,
	cost_usd            DOUBLE PRECISION NOT NULL DEFAULT 0,
	model               TEXT    NOT NULL DEFAULT '',
	chat                BYTEA,
	target_instance     TEXT    NOT NULL DEFAULT '',
	target_chat_id      TEXT    NOT NULL DEFAULT '',
	target_thread_id    TEXT    NOT NULL DEFAULT '',
	is_verbose          BOOLEAN NOT NULL DEFAULT false,
	abort_hint          BOOLEAN NOT NULL DEFAULT false,
	memory_flush_cycle  BIGINT  NOT NULL DEFAULT 0
);
CREATE INDEX sessions_updated ON sessions(updated_at DESC, key);

CREATE TABLE pairing_codes (
	instance   TEXT   NOT NULL,
	sender_id  TEXT   NOT NULL,
	code       TEXT   NOT NULL UNIQUE,
	created_at BIGINT NOT NULL,
	expires_at BIGINT NOT NULL,
	PRIMARY KEY (instance, sender_id)
);
CREATE TABLE approved_senders (
	instance    TEXT   NOT NULL,
	sender_id   TEXT   NOT NULL,
	approved_at BIGINT NOT NULL,
	PRIMARY KEY (instance, sender_id)
);
CREATE TABLE pairing_guesses (
	at BIGINT NOT NULL
);

CREATE TABLE leases (
	name        TEXT   PRIMARY KEY,
	holder      TEXT   NOT NULL,
	info        TEXT   NOT NULL DEFAULT '',
	epoch       BIGINT NOT NULL,
	acquired_at BIGINT NOT NULL,
	renewed_at  BIGINT NOT NULL,
	expires_at  BIGINT NOT NULL
);
`,
	// 2: the host that owns an open journal entry.
	`
ALTER TABLE journal ADD COLUMN owner TEXT NOT NULL DEFAULT '';
`,
	// 3: several hosts: session placements, handed entries, relayed
	// channel calls.
	`
ALTER TABLE journal ADD COLUMN handed BOOLEAN NOT NULL DEFAULT false;
CREATE INDEX journal_handed ON journal(owner, id) WHERE handed;
CREATE TABLE placements (
	session_key TEXT   PRIMARY KEY,
	host        TEXT   NOT NULL,
	placed_at   BIGINT NOT NULL
);
CREATE TABLE relay (
	id         BIGSERIAL PRIMARY KEY,
	instance   TEXT    NOT NULL,
	origin     TEXT    NOT NULL,
	op         TEXT    NOT NULL,
	request    BYTEA   NOT NULL,
	no_reply   BOOLEAN NOT NULL DEFAULT false,
	state      TEXT    NOT NULL DEFAULT 'new',
	claimed_by TEXT    NOT NULL DEFAULT '',
	result     BYTEA,
	created_at BIGINT  NOT NULL
);
CREATE INDEX relay_new ON relay(instance, id) WHERE state = 'new';
`,
	// 4: who approved a sender (pairing list -approved).
	`
ALTER TABLE approved_senders ADD COLUMN approved_by TEXT NOT NULL DEFAULT '';
`,
	// 5: the schedules added from chat and by the agent, and the last run
	// of every scheduled job, shared by the hosts (until now each host's
	// data_dir/schedules.json and schedule.json; a host moves its own in
	// once).
	`
CREATE TABLE schedules (
	id       BIGSERIAL PRIMARY KEY,
	name     TEXT    NOT NULL UNIQUE,
	cron     TEXT    NOT NULL DEFAULT '',
	at       BIGINT  NOT NULL DEFAULT 0,
	chat     TEXT    NOT NULL,
	is_group BOOLEAN NOT NULL DEFAULT false,
	prompt   TEXT    NOT NULL,
	sender   TEXT    NOT NULL DEFAULT '',
	added_at BIGINT  NOT NULL
);
CREATE TABLE schedule_runs (
	job     TEXT   PRIMARY KEY,
	last_at BIGINT NOT NULL
);
`,
	// 6: session keys carry the agent that serves them
	// ("agent:<id>:<key>", sessionkey.Key.String): every session, journal
	// entry and placement made before is the default agent's.
	`
UPDATE sessions SET key = 'agent:main:' || key;
UPDATE journal SET session_key = 'agent:main:' || session_key WHERE session_key <> '';
UPDATE placements SET session_key = 'agent:main:' || session_key;
`,
	// 7: the usage ledger: one row per finished turn (store.TurnUsage),
	// written with its reply; indexed on the time alone (every query is
	// over a window; see the sqlite engine's step 11).
	`
CREATE TABLE usage (
	id                    BIGSERIAL PRIMARY KEY,
	journal_id            BIGINT           NOT NULL,
	at                    BIGINT           NOT NULL,
	agent                 TEXT             NOT NULL,
	instance              TEXT             NOT NULL,
	chat_id               TEXT             NOT NULL,
	sender                TEXT             NOT NULL,
	model                 TEXT             NOT NULL,
	input_tokens          BIGINT           NOT NULL,
	output_tokens         BIGINT           NOT NULL,
	cache_read_tokens     BIGINT           NOT NULL,
	cache_creation_tokens BIGINT           NOT NULL,
	cost_usd              DOUBLE PRECISION NOT NULL,
	duration_ns           BIGINT           NOT NULL,
	outcome               TEXT             NOT NULL
);
CREATE INDEX usage_at ON usage(at);
`,
	// 8: the audit trail (store.AuditEvent), kept for audit { keep }.
	`
CREATE TABLE audit (
	id       BIGSERIAL PRIMARY KEY,
	at       BIGINT NOT NULL,
	kind     TEXT   NOT NULL,
	actor    TEXT   NOT NULL,
	instance TEXT   NOT NULL,
	chat_id  TEXT   NOT NULL,
	subject  TEXT   NOT NULL,
	decision TEXT   NOT NULL,
	detail   TEXT   NOT NULL
);
CREATE INDEX audit_at ON audit(at);
CREATE INDEX audit_kind ON audit(kind, at);
`,
	// 9: who asks, with a pairing code (store.PairingCode.SenderName,
	// SenderUsername); "" for the codes made before.
	`
ALTER TABLE pairing_codes ADD COLUMN sender_name TEXT NOT NULL DEFAULT '';
ALTER TABLE pairing_codes ADD COLUMN sender_username TEXT NOT NULL DEFAULT '';
`,
	// 10: a turn's cost is its own (issue 52). claude's total_cost_usd,
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
ALTER TABLE usage ADD COLUMN estimate BOOLEAN NOT NULL DEFAULT FALSE;
UPDATE usage u SET cost_usd = u.cost_usd - p.prev FROM (
	SELECT id, LAG(cost_usd) OVER (PARTITION BY agent, instance, chat_id ORDER BY at, id) AS prev
	FROM usage WHERE cost_usd > 0) p
	WHERE p.id = u.id AND p.prev IS NOT NULL AND p.prev <= u.cost_usd;
UPDATE usage SET cost_usd = (input_tokens + 5.0 * output_tokens + 0.1 * cache_read_tokens + 1.25 * cache_creation_tokens) *
	(CASE WHEN model = 'claude-opus-5-5' THEN 4 WHEN model = 'claude-opus-4-5' THEN 5 WHEN model LIKE '%haiku%' THEN 1
		WHEN model LIKE '%sonnet%' THEN 3 ELSE 15 END) / 1000000.0
	WHERE cost_usd = 0 AND outcome != 'ok' AND input_tokens + output_tokens + cache_read_tokens + cache_creation_tokens > 0;
UPDATE usage SET estimate = TRUE;
ALTER TABLE sessions ADD COLUMN claude_cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN claude_cost_of TEXT NOT NULL DEFAULT '';
`,
	// 11: a reply of several messages (store.Reply.Parts): each chunk's
	// own format and attachments.
	`
ALTER TABLE reply_chunks ADD COLUMN format TEXT NOT NULL DEFAULT '';
ALTER TABLE reply_chunks ADD COLUMN attach BYTEA;
`,
	// 12: the results of finished plugin tool calls by idempotency key
	// (store.ToolResults), pruned with the journal entry of their turn.
	`
CREATE TABLE tool_results (
	key        TEXT   PRIMARY KEY,
	journal_id BIGINT NOT NULL,
	result     BYTEA  NOT NULL,
	at         BIGINT NOT NULL
);
CREATE INDEX tool_results_journal ON tool_results(journal_id);
`,
	// 13: an attempt that truly began (store.Entry.Began, issue 85): only
	// those spend a message's attempts. A run in processing at the upgrade
	// is taken to have begun, as it was counted before.
	// Launches counts every start (store.MaxLaunches bounds those that
	// never began); an entry's earlier starts are its attempts.
	`
ALTER TABLE journal ADD COLUMN began BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE journal ADD COLUMN launches INTEGER NOT NULL DEFAULT 0;
UPDATE journal SET began = true WHERE state = 'processing';
UPDATE journal SET launches = attempts;
`,
}

// schemaVersion is the version a database has after Open.
var schemaVersion = len(migrations)

// SchemaVersion is the schema version this binary migrates a database to
// (clawhost version prints it): Open refuses a database with a newer one.
func SchemaVersion() int { return schemaVersion }

// migrateLock is the advisory lock key that serializes migrations of
// hosts starting at once on one database.
const migrateLock = 0x636c6177 // "claw"

// migrate brings the schema to schemaVersion, one transaction per step,
// under an advisory lock so that hosts starting together migrate once. A
// database from a newer binary is refused rather than guessed at.
func (d *DB) migrate(ctx context.Context) error {
	for {
		var v int
		done := false
		err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrateLock); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS clawhost_schema (version INTEGER NOT NULL)`); err != nil {
				return err
			}
			err := tx.QueryRow(ctx, `SELECT version FROM clawhost_schema`).Scan(&v)
			if err == pgx.ErrNoRows {
				if _, err := tx.Exec(ctx, `INSERT INTO clawhost_schema(version) VALUES (0)`); err != nil {
					return err
				}
				v = 0
			} else if err != nil {
				return err
			}
			if v > len(migrations) {
				return &store.SchemaTooNewError{Engine: "postgres", Found: v, Known: len(migrations)}
			}
			if v == len(migrations) {
				done = true
				return nil
			}
			if _, err := tx.Exec(ctx, migrations[v]); err != nil {
				return fmt.Errorf("step %d: %w", v+1, err)
			}
			_, err = tx.Exec(ctx, `UPDATE clawhost_schema SET version = $1`, v+1)
			return err
		})
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if done {
			return nil
		}
	}
}

// Redact returns a PostgreSQL url or key=value string with its password
// replaced by "xxxxx", for logs and errors.
func Redact(s string) string {
	if u, err := url.Parse(s); err == nil && u.Scheme != "" {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
		q := u.Query()
		if q.Has("password") {
			q.Set("password", "xxxxx")
			u.RawQuery = q.Encode()
		}
		return u.String()
	}
	f := strings.Fields(s)
	for i, kv := range f {
		if strings.HasPrefix(kv, "password=") {
			f[i] = "password=xxxxx"
		}
	}
	return strings.Join(f, " ")
}
