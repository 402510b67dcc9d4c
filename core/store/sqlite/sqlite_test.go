package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/storetest"
	"github.com/clawhost/clawhost/core/store/storetest/migrationtest"
)

// TestConformance runs the store contract's conformance suite against
// SQLite, each subtest on a fresh data directory.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Opener {
		dir := t.TempDir()
		t.Cleanup(func() { checkFinishedAt(t, dir) })
		return func(t *testing.T, now func() time.Time) store.Store {
			// NORMAL keeps the many small sequential writes of the suite
			// fast; the crash test runs the default (FULL).
			d, err := Open(context.Background(), dir, Options{Synchronous: "NORMAL", Now: now})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			return d
		}
	})
	storetest.RunHosts(t, func(t *testing.T) storetest.HostOpener {
		dir := t.TempDir()
		return func(t *testing.T, now func() time.Time, host string) store.Store {
			d, err := Open(context.Background(), dir, Options{Synchronous: "NORMAL", Now: now, Host: host})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			return d
		}
	})
}

// checkFinishedAt checks the journal's invariant the indexes rely on
// (migration 6): finished_at is set exactly on the entries in a terminal
// state. Run after each conformance test, every path to a terminal state
// is covered.
func checkFinishedAt(t *testing.T, dir string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, DBFile)+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var bad, all int
	err = db.QueryRow(`SELECT count(*) FILTER (WHERE (finished_at > 0) <> (state IN ('done', 'dropped', 'failed'))), count(*) FROM journal`).Scan(&bad, &all)
	if err != nil {
		if strings.Contains(err.Error(), "no such table") || strings.Contains(err.Error(), "unable to open") {
			return // the test opened no database
		}
		t.Fatalf("checking finished_at: %v", err)
	}
	if bad > 0 {
		t.Errorf("%d of %d journal entries have finished_at set iff not terminal", bad, all)
	}
}

// TestMigrationSetsFinishedAt: a journal written before migration 6 gets
// finished_at on its terminal entries (so Prune still finds them) and
// none on its open ones (so recovery still does).
func TestMigrationSetsFinishedAt(t *testing.T) {
	dir := t.TempDir()
	clk := storetest.NewClock()
	d := openTest(t, dir, clk)
	ctx := context.Background()
	var ids []int64
	for i := range 3 {
		res, err := d.Accept(ctx, store.Inbound{Instance: "tg", ChatID: "100", MessageID: fmt.Sprint(i), ReceivedAt: clk.Now(), Message: []byte(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.ID)
	}
	if err := d.Finish(ctx, store.FinishRequest{IDs: ids[:2], State: store.StateDone}); err != nil {
		t.Fatal(err)
	}
	// Back to schema 5: the payloads in the rows, the column gone, the old
	// indexes back.
	for _, q := range append(append(append(slices.Concat(undoMigration17, undoMigration15, undoMigration14, undoMigration13, undoMigration12, undoMigration11, undoMigration10, undoMigration9), undoMigration8...), undoMigration7...),
		`DROP INDEX journal_live`, `DROP INDEX journal_done`, `ALTER TABLE journal DROP COLUMN finished_at`,
		`CREATE INDEX journal_open ON journal(id) WHERE state NOT IN ('done', 'dropped', 'failed')`,
		`CREATE INDEX journal_pending ON journal(session_key, id) WHERE state = 'queued'`,
		`CREATE INDEX journal_finished ON journal(updated_at) WHERE state IN ('done', 'dropped', 'failed')`,
		`PRAGMA user_version = 5`,
	) {
		if _, err := d.wdbExec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	d.Close()
	d = openTest(t, dir, clk)
	checkFinishedAt(t, dir)
	open, err := d.ListUnfinished(ctx, 0, 0)
	if err != nil || len(open) != 1 || open[0].ID != ids[2] {
		t.Fatalf("open entries after the migration: %v, %v; want only %d", open, err, ids[2])
	}
	clk.Advance(time.Hour)
	if n, err := d.Prune(ctx, clk.Now()); err != nil || n != 2 {
		t.Fatalf("Prune after the migration = %d, %v; want the 2 finished entries", n, err)
	}
}

// TestChunkWithoutTextIsAnError: a chunk whose text row is missing (a
// damaged database: RecordReply writes both) is reported, not sent empty.
func TestChunkWithoutTextIsAnError(t *testing.T) {
	t.Parallel()
	d := openTest(t, t.TempDir(), nil)
	ctx := context.Background()
	id := storetest.MustAccept(t, d, storetest.Msg(1))
	if err := d.Start(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := d.RecordReply(ctx, store.Reply{JournalID: id, Text: "ab", Chunks: []string{"a", "b"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.wdbExec(fmt.Sprintf(`DELETE FROM chunk_texts WHERE journal_id = %d AND idx = 1`, id)); err != nil {
		t.Fatal(err)
	}
	if p, err := d.PendingReply(ctx, id); err == nil {
		t.Fatalf("PendingReply with a chunk's text gone = %+v, want an error", p.Chunks)
	}
}

// undoMigration7 takes a database back to schema 6: the payloads in their
// rows, their tables gone (user_version is the caller's).
var undoMigration7 = []string{
	`UPDATE journal SET message = (SELECT message FROM journal_messages m WHERE m.id = journal.id)`,
	`UPDATE reply_chunks SET text = (SELECT text FROM chunk_texts t WHERE t.journal_id = reply_chunks.journal_id AND t.idx = reply_chunks.idx)`,
	`DROP TABLE journal_messages`,
	`DROP TABLE chunk_texts`,
}

// undoMigration8 takes a database back from schema 8 to 7.
var undoMigration8 = []string{`ALTER TABLE approved_senders DROP COLUMN approved_by`}

// undoMigration13 takes a database back from schema 13 to 12: pairing
// codes without the sender's names.
var undoMigration13 = []string{`ALTER TABLE pairing_codes DROP COLUMN sender_name`, `ALTER TABLE pairing_codes DROP COLUMN sender_username`}

// undoMigration12 takes a database back from schema 12 to 11: no audit
// trail.
var undoMigration12 = []string{`DROP TABLE audit`}

// undoMigration11 takes a database back from schema 11 to 10: no ledger.
var undoMigration11 = []string{`DROP TABLE usage`}

// undoMigration10 takes a database back from schema 10 to 9: session keys
// without their agent.
var undoMigration10 = []string{
	`UPDATE sessions SET key = substr(key, 12) WHERE key LIKE 'agent:main:%'`,
	`UPDATE journal SET session_key = substr(session_key, 12) WHERE session_key LIKE 'agent:main:%'`,
}

// TestMigrationAgentKeys: the sessions and queued entries of a database
// made before session keys carried the agent are the default agent's
// afterwards, with everything they held.
func TestMigrationAgentKeys(t *testing.T) {
	dir := t.TempDir()
	clk := storetest.NewClock()
	d := openTest(t, dir, clk)
	migrationtest.SeedAgentKeys(t, d)
	for _, q := range append(slices.Concat(undoMigration17, undoMigration15, undoMigration14, undoMigration13, undoMigration12, undoMigration11), `PRAGMA user_version = 9`) {
		if _, err := d.wdbExec(q); err != nil {
			t.Fatal(err)
		}
	}
	d.Close()
	d = openTest(t, dir, clk)
	migrationtest.CheckAgentKeys(t, d)
}

// undoMigration9 takes a database back from schema 9 to 8.
var undoMigration9 = []string{`DROP TABLE schedules`, `DROP TABLE schedule_runs`}

// TestMigrationSchedules: a database of schema 8 (before schedules were
// stored) keeps its data and gets the schedule tables.
func TestMigrationSchedules(t *testing.T) {
	dir := t.TempDir()
	clk := storetest.NewClock()
	d := openTest(t, dir, clk)
	ctx := context.Background()
	r, _ := d.RequestPairing(ctx, store.PairingRequest{Instance: "tg", SenderID: "5"})
	if _, err := d.ApprovePairing(ctx, store.ApproveRequest{Code: r.Code.Code}); err != nil {
		t.Fatal(err)
	}
	for _, q := range append(slices.Concat(undoMigration17, undoMigration15, undoMigration14, undoMigration13, undoMigration12, undoMigration11, undoMigration10, undoMigration9), `PRAGMA user_version = 8`) {
		if _, err := d.wdbExec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	d.Close()
	d = openTest(t, dir, clk)
	if ok, err := d.IsApproved(ctx, "tg", "5", 0); !ok || err != nil {
		t.Fatalf("approval after the migration: %v, %v", ok, err)
	}
	if _, err := d.AddSchedule(ctx, store.Schedule{Name: "s", Cron: "* * * * *", Chat: "tg:5", Prompt: "p"}); err != nil {
		t.Fatal(err)
	}
	if err := d.RecordScheduleRun(ctx, "s", clk.Now()); err != nil {
		t.Fatal(err)
	}
	if list, err := d.ListSchedules(ctx); err != nil || len(list) != 1 {
		t.Fatalf("schedules after the migration: %+v, %v", list, err)
	}
}

// TestMigrationApprovedBy: an approval stored before migration 8 is kept,
// listed with no approver, and still counts.
func TestMigrationApprovedBy(t *testing.T) {
	dir := t.TempDir()
	d := openTest(t, dir, storetest.NewClock())
	ctx := context.Background()
	r, err := d.RequestPairing(ctx, store.PairingRequest{Instance: "tg", SenderID: "5"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.ApprovePairing(ctx, store.ApproveRequest{Code: r.Code.Code, By: "tg:9"}); err != nil {
		t.Fatal(err)
	}
	for _, q := range append(append(slices.Concat(undoMigration17, undoMigration15, undoMigration14, undoMigration13, undoMigration12, undoMigration11, undoMigration10, undoMigration9), undoMigration8...), `PRAGMA user_version = 7`) {
		if _, err := d.wdbExec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	d.Close()
	d = openTest(t, dir, nil)
	list, err := d.ApprovedSenders(ctx, "")
	if err != nil || len(list) != 1 || list[0].Entry() != "tg:5" || list[0].ApprovedBy != "" {
		t.Fatalf("after the migration: %+v, %v", list, err)
	}
	if ok, err := d.IsApproved(ctx, "tg", "5", 0); !ok || err != nil {
		t.Fatalf("IsApproved after the migration = %v, %v", ok, err)
	}
}

// TestMigrationMovesPayloads: a database written before migration 7 keeps
// every entry's message and every chunk's text, now beside their rows, and
// no row keeps a copy.
func TestMigrationMovesPayloads(t *testing.T) {
	dir := t.TempDir()
	d := openTest(t, dir, storetest.NewClock())
	ctx := context.Background()
	want := map[int64][]byte{}
	for i := range 4 {
		in := storetest.Msg(i)
		if i == 3 {
			in.Message = nil // an entry without a message stays without one
		}
		want[storetest.MustAccept(t, d, in)] = in.Message
	}
	replied := storetest.MustAccept(t, d, storetest.Msg(4))
	want[replied] = storetest.Msg(4).Message
	if err := d.Start(ctx, replied); err != nil {
		t.Fatal(err)
	}
	if err := d.RecordReply(ctx, store.Reply{JournalID: replied, Text: "ab", Chunks: []string{"a", "b"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.MarkSent(ctx, store.ChunkSent{JournalID: replied, Index: 0}); err != nil {
		t.Fatal(err)
	}
	// Back to schema 6: the payloads in the rows, their tables gone.
	for _, q := range append(append(append(slices.Concat(undoMigration17, undoMigration15, undoMigration14, undoMigration13, undoMigration12, undoMigration11, undoMigration10, undoMigration9), undoMigration8...), undoMigration7...), `PRAGMA user_version = 6`) {
		if _, err := d.wdbExec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	d.Close()
	d = openTest(t, dir, nil)
	for id, m := range want {
		e, err := d.Entry(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if string(e.Message) != string(m) || (m == nil) != (e.Message == nil) {
			t.Errorf("entry %d: message %q after the migration, want %q", id, e.Message, m)
		}
	}
	p, err := d.PendingReply(ctx, replied)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Chunks) != 2 || p.Chunks[0].Text != "a" || p.Chunks[1].Text != "b" || p.Chunks[0].SentAt.IsZero() || !p.Chunks[1].SentAt.IsZero() {
		t.Errorf("chunks after the migration: %+v", p.Chunks)
	}
	for _, q := range []string{
		`SELECT count(*) FROM journal WHERE message IS NOT NULL`,
		`SELECT count(*) FROM reply_chunks WHERE text <> ''`,
	} {
		var n int
		if err := d.rdb.QueryRowContext(ctx, q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%s = %d, want 0", q, n)
		}
	}
}

// openTest opens a DB in dir (clk nil: the wall clock) that is closed when
// the test ends.
func openTest(t testing.TB, dir string, clk *storetest.Clock) *DB {
	t.Helper()
	// NORMAL keeps the many small sequential writes of the tests fast; the
	// crash test runs the default (FULL).
	opts := Options{Synchronous: "NORMAL"}
	if clk != nil {
		opts.Now = clk.Now
	}
	d, err := Open(context.Background(), dir, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// count returns the number of rows in an engine table.
func count(t testing.TB, d *DB, table string) int {
	t.Helper()
	var n int
	if err := d.rdb.QueryRow(`SELECT count(*) FROM ` + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestDedupeCap: the oldest keys beyond Options.DedupeMax are pruned, and
// the cap and the keys survive a restart.
func TestDedupeCap(t *testing.T) {
	t.Parallel()
	clk := storetest.NewClock()
	dir := t.TempDir()
	d, err := Open(context.Background(), dir, Options{Now: clk.Now, DedupeMax: 50})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 60 {
		storetest.MustAccept(t, d, storetest.Msg(i))
		clk.Advance(time.Millisecond)
	}
	if n := count(t, d, "dedupe"); n != 50 {
		t.Fatalf("dedupe rows = %d, want 50", n)
	}
	// The 10 oldest were pruned: they are accepted again; the newest are not.
	if r, _ := d.Accept(context.Background(), storetest.Msg(0)); r.Duplicate {
		t.Fatal("oldest key survived the cap")
	}
	if r, _ := d.Accept(context.Background(), storetest.Msg(59)); !r.Duplicate {
		t.Fatal("newest key was pruned")
	}
	d.Close()
	// The cap and the keys survive a restart.
	d2, err := Open(context.Background(), dir, Options{Now: clk.Now, DedupeMax: 50})
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	if r, _ := d2.Accept(context.Background(), storetest.Msg(58)); !r.Duplicate {
		t.Fatal("dedupe key lost across restart")
	}
	storetest.MustAccept(t, d2, storetest.Msg(1000))
	if n := count(t, d2, "dedupe"); n != 50 {
		t.Fatalf("after reopen dedupe rows = %d, want 50", n)
	}
}

// TestDefaultDedupeCap: without an option the cap is DefaultDedupeMax.
func TestDefaultDedupeCap(t *testing.T) {
	t.Parallel()
	clk := storetest.NewClock()
	d := openTest(t, t.TempDir(), clk)
	// Filling 200,000 keys takes too long for a unit test; TestDedupeCap
	// checks the pruning itself.
	if d.w.dedupeMax != DefaultDedupeMax {
		t.Fatalf("dedupe cap = %d, want %d", d.w.dedupeMax, DefaultDedupeMax)
	}
	if DefaultDedupeMax < 100_000 {
		t.Fatalf("DefaultDedupeMax %d cannot hold a day of a busy gateway's keys", DefaultDedupeMax)
	}
}

// wdbExec runs a statement through the writer (test surgery only).
func (d *DB) wdbExec(q string, args ...any) (int64, error) {
	var n int64
	err := d.w.do(context.Background(), func(t *wtx) (err error) {
		n, err = t.execN(q, args...)
		return err
	})
	return n, err
}

// TestOpenTwiceIsRefused: the lock file keeps a second Open off the
// directory.
func TestOpenTwiceIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	openTest(t, dir, nil)
	if d, err := Open(context.Background(), dir, Options{}); err == nil {
		d.Close()
		t.Fatal("second Open of one data dir succeeded")
	}
}

// TestCloseReleasesTheLockOfAForkedChild: the directory can be opened
// again right after Close even while a child forked meanwhile still holds
// a duplicate of the lock file's descriptor (between its fork and its
// exec): Close unlocks rather than only closing its descriptor. A
// parallel test's child made TestSchemaTooNew's reopen fail in CI.
func TestCloseReleasesTheLockOfAForkedChild(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := openTest(t, dir, nil)
	dup, err := syscall.Dup(int(d.lock.Fd())) // what the forked child holds
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(dup)
	d.Close()
	d, err = Open(context.Background(), dir, Options{})
	if err != nil {
		t.Fatalf("Open after Close, a duplicate of the lock's descriptor open elsewhere: %v", err)
	}
	d.Close()
}

// TestSchemaTooNew: a database migrated by a newer binary is refused.
func TestSchemaTooNew(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := openTest(t, dir, nil)
	if _, err := d.wdbExec(fmt.Sprintf("PRAGMA user_version = %d", schemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	d.Close()
	d, err := Open(context.Background(), dir, Options{})
	if err == nil {
		d.Close()
		t.Fatal("opened a database with a newer schema")
	}
	var tooNew *store.SchemaTooNewError
	if !errors.As(err, &tooNew) || tooNew.Found != schemaVersion+1 || tooNew.Known != schemaVersion || tooNew.Engine != "sqlite" {
		t.Fatalf("Open on a newer schema: %v", err)
	}
}

// TestMigrationIsAllOrNone: a step that fails leaves the database as it
// was before Open, the earlier steps of the same Open included; the next
// Open (of a binary whose steps work) migrates it whole. Not parallel: it
// changes the package's steps.
func TestMigrationIsAllOrNone(t *testing.T) {
	dir := t.TempDir()
	steps := migrations
	migrations = append(slices.Clone(steps), `CREATE TABLE half_done (a); SELECT no_such_function();`)
	_, err := Open(context.Background(), dir, Options{Synchronous: "NORMAL"})
	migrations = steps
	if err == nil {
		t.Fatal("Open with a failing step succeeded")
	}
	db, err := sql.Open("sqlite", filepath.Join(dir, DBFile))
	if err != nil {
		t.Fatal(err)
	}
	var version, tables int
	if err := db.QueryRow(`PRAGMA user_version`).Scan(&version); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master`).Scan(&tables); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if version != 0 || tables != 0 {
		t.Fatalf("after a failed migration: user_version %d, %d schema objects; want 0 and 0", version, tables)
	}
	d := openTest(t, dir, nil)
	if _, err := d.Accept(context.Background(), storetest.Msg(1)); err != nil {
		t.Fatalf("Accept after the migration: %v", err)
	}
}

// TestFileModes: 0700 for the directory, 0600 for every file, also when
// they were looser before Open.
func TestFileModes(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	ctx := context.Background()
	check := func(dir string) {
		t.Helper()
		st, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != DirMode {
			t.Errorf("dir mode = %v, want %v", st.Mode().Perm(), DirMode)
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, e := range ents {
			info, err := e.Info()
			if err != nil {
				t.Fatal(err)
			}
			seen[e.Name()] = true
			if info.Mode().Perm() != FileMode {
				t.Errorf("%s mode = %v, want %v", e.Name(), info.Mode().Perm(), FileMode)
			}
		}
		for _, f := range []string{DBFile, DBFile + "-wal", DBFile + "-shm", LockFile} {
			if !seen[f] {
				t.Errorf("%s missing (have %v)", f, seen)
			}
		}
	}

	// A fresh, nested directory.
	fresh := filepath.Join(base, "a", "data")
	d := openTest(t, fresh, nil)
	storetest.MustAccept(t, d, storetest.Msg(1))
	check(fresh)
	d.Close()

	// Loosen everything, reopen: tightened.
	os.Chmod(fresh, 0o755)
	for _, f := range []string{DBFile, DBFile + "-wal", DBFile + "-shm", LockFile} {
		os.Chmod(filepath.Join(fresh, f), 0o644)
	}
	d, err := Open(ctx, fresh, Options{})
	if err != nil {
		t.Fatal(err)
	}
	storetest.MustAccept(t, d, storetest.Msg(2))
	check(fresh)
	d.Close()

	// Search for others (run_as needs it) is kept; reading is not.
	os.Chmod(fresh, 0o711)
	d, err = Open(ctx, fresh, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	if st, _ := os.Stat(fresh); st.Mode().Perm() != 0o711 {
		t.Errorf("a search-only data dir became %v", st.Mode().Perm())
	}

	// A file in place of the directory.
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o600)
	if d, err := Open(ctx, file, Options{}); err == nil {
		d.Close()
		t.Fatal("Open on a regular file succeeded")
	}
}

// TestPruneDeletesChunks: Prune takes a finished entry's message, reply
// and chunks along (the suite sees the entry and the reply go; no method reads a
// chunk alone).
func TestPruneDeletesChunks(t *testing.T) {
	t.Parallel()
	clk := storetest.NewClock()
	d := openTest(t, t.TempDir(), clk)
	ctx := context.Background()
	old := storetest.MustAccept(t, d, storetest.Msg(1))
	d.Start(ctx, old)
	d.RecordReply(ctx, store.Reply{JournalID: old, Text: "ab", Chunks: []string{"a", "b"}})
	d.MarkSent(ctx, store.ChunkSent{JournalID: old, Index: 0})
	d.MarkSent(ctx, store.ChunkSent{JournalID: old, Index: 1})
	clk.Advance(time.Hour)
	if n, err := d.Prune(ctx, clk.Now()); err != nil || n != 1 {
		t.Fatalf("Prune = %d, %v; want 1", n, err)
	}
	for _, table := range []string{"journal", "journal_messages", "replies", "reply_chunks", "chunk_texts"} {
		if n := count(t, d, table); n != 0 {
			t.Fatalf("%d rows left in %s", n, table)
		}
	}
}

// TestStatementsCounted: an accept alone in its transaction is three
// statements on the writer (BEGIN, the accept's own, COMMIT) or more, a
// read of the pending entries one on the read pool, and the count only
// grows.
func TestStatementsCounted(t *testing.T) {
	d := openTest(t, t.TempDir(), nil)
	before := d.Statements()
	storetest.MustAccept(t, d, storetest.Msg(1))
	afterAccept := d.Statements()
	if afterAccept-before < 3 {
		t.Fatalf("an accept counted %d statements, want ≥ 3 (BEGIN, insert, COMMIT)", afterAccept-before)
	}
	if _, err := d.CountPending(context.Background(), "no-such-session"); err != nil {
		t.Fatal(err)
	}
	if got := d.Statements() - afterAccept; got != 1 {
		t.Fatalf("a read counted %d statements, want 1", got)
	}
}

// undoMigration17 takes a database back from schema 17 to 16: journal
// entries without the began mark and the launch count.
var undoMigration17 = []string{`ALTER TABLE journal DROP COLUMN began`, `ALTER TABLE journal DROP COLUMN launches`}

// undoMigration15 takes a database back from schema 15 to 14: chunks
// without parts of their own.
var undoMigration15 = []string{`ALTER TABLE chunk_texts DROP COLUMN format`, `ALTER TABLE chunk_texts DROP COLUMN attach`}

// undoMigration14 takes a database back from schema 14 to 13: ledger rows
// without the estimate flag, sessions without claude's running total.
var undoMigration14 = []string{`ALTER TABLE usage DROP COLUMN estimate`, `ALTER TABLE sessions DROP COLUMN claude_cost_usd`,
	`ALTER TABLE sessions DROP COLUMN claude_cost_of`}

// TestMigrationTurnCosts: a ledger of schema 13 stored claude's running
// total as each turn's cost. The migration makes each row the difference
// to the previous priced row of its chat (not when that is larger: a new
// session began), prices a cut turn's tokens (an unknown "opus" at $15/M
// input: 100k in, 1k out is $1.575), and marks every row an estimate.
func TestMigrationTurnCosts(t *testing.T) {
	dir := t.TempDir()
	clk := storetest.NewClock()
	d := openTest(t, dir, clk)
	for _, q := range append(slices.Concat(undoMigration17, undoMigration15, undoMigration14), `PRAGMA user_version = 13`) {
		if _, err := d.wdbExec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for i, r := range migrationtest.TurnCostRows {
		if _, err := d.wdbExec(fmt.Sprintf(`INSERT INTO usage(journal_id, at, agent, instance, chat_id, sender, model, input_tokens, output_tokens,
			cache_read_tokens, cache_creation_tokens, cost_usd, duration_ns, outcome) VALUES (%d, %d, 'main', 'tg', '%s', 'tg:1', 'opus', 100000, 1000, 0, 0, %v, 1, '%s')`,
			i+1, clk.Now().Add(time.Duration(i)*time.Minute).UnixNano(), r.Chat, r.Total, r.Outcome)); err != nil {
			t.Fatal(err)
		}
	}
	d.Close()
	d = openTest(t, dir, clk)
	migrationtest.CheckTurnCosts(t, d)
}
