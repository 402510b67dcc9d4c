package postgres_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/postgres"
	"github.com/clawhost/clawhost/core/store/postgres/pgtest"
	"github.com/clawhost/clawhost/core/store/storetest"
	"github.com/clawhost/clawhost/core/store/storetest/migrationtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// open opens the engine on url and closes it with the test.
func open(t testing.TB, url string, now func() time.Time) *postgres.DB {
	t.Helper()
	d, err := postgres.Open(context.Background(), url, postgres.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// TestConformance runs the store contract's suite against a real
// PostgreSQL: a database of its own per subtest.
func TestConformance(t *testing.T) {
	srv := pgtest.Cluster(t)
	storetest.Run(t, func(t *testing.T) storetest.Opener {
		url := srv.NewDatabase(t)
		return func(t *testing.T, now func() time.Time) store.Store {
			d, err := postgres.Open(context.Background(), url, postgres.Options{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			return d
		}
	})
	hosts := func(t *testing.T) storetest.HostOpener {
		url := srv.NewDatabase(t)
		return func(t *testing.T, now func() time.Time, host string) store.Store {
			d, err := postgres.Open(context.Background(), url, postgres.Options{Now: now, Host: host})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { d.Close() })
			return d
		}
	}
	storetest.RunHosts(t, hosts)
	storetest.RunCluster(t, hosts)
}

// TestHostsMigrateOnce: hosts starting together on an empty database
// migrate it once (the advisory lock) and all open it.
func TestHostsMigrateOnce(t *testing.T) {
	url := pgtest.Cluster(t).NewDatabase(t)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			d, err := postgres.Open(context.Background(), url, postgres.Options{})
			if err == nil {
				d.Close()
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	d := open(t, url, nil)
	var v int
	if err := d.Pool().QueryRow(context.Background(), `SELECT version FROM clawhost_schema`).Scan(&v); err != nil || v != postgres.SchemaVersion() {
		t.Fatalf("schema version %d (%v), want %d", v, err, postgres.SchemaVersion())
	}
}

// TestNewerSchemaIsRefused: a database migrated by a newer binary is not
// guessed at.
func TestNewerSchemaIsRefused(t *testing.T) {
	url := pgtest.Cluster(t).NewDatabase(t)
	d := open(t, url, nil)
	if _, err := d.Pool().Exec(context.Background(), `UPDATE clawhost_schema SET version = version + 1`); err != nil {
		t.Fatal(err)
	}
	d.Close()
	_, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err == nil || !strings.Contains(err.Error(), "newer than this binary") {
		t.Fatalf("Open on a newer schema: %v", err)
	}
}

// TestBadURL: an unparsable url or an unreachable server is a clear
// error that never shows the password.
func TestBadURL(t *testing.T) {
	for _, url := range []string{"postgres://u:s3cret@[::1", "postgres://u:s3cret@127.0.0.1:1/db?connect_timeout=2"} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := postgres.Open(ctx, url, postgres.Options{})
		cancel()
		if err == nil {
			t.Fatalf("Open(%q) succeeded", url)
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("the error shows the password: %v", err)
		}
	}
	if got := postgres.Redact("postgres://u:s3cret@h/db?password=x2"); strings.Contains(got, "s3cret") || strings.Contains(got, "x2") {
		t.Errorf("Redact: %s", got)
	}
	if got := postgres.Redact("host=h password=s3cret dbname=x"); strings.Contains(got, "s3cret") {
		t.Errorf("Redact: %s", got)
	}
}

// TestPlainRemoteRefused: a server off this machine is not connected to
// unless the url requires TLS; the refusal comes before any dial, names
// the host and the fix, and never the password.
func TestPlainRemoteRefused(t *testing.T) {
	for _, tc := range []struct {
		url     string
		refused bool
	}{
		{"postgres://u:s3cret@db.invalid:5432/x", true},
		{"postgres://u:s3cret@db.invalid:5432/x?sslmode=disable", true},
		{"postgres://u:s3cret@db.invalid:5432/x?sslmode=prefer", true},
		{"postgres://u:s3cret@127.0.0.1:1,db.invalid:5432/x?sslmode=allow", true},
		{"host=192.0.2.1 password=s3cret dbname=x sslmode=disable", true},
		{"postgres://u:s3cret@db.invalid:5432/x?sslmode=require&connect_timeout=1", false},
		{"postgres://u:s3cret@127.0.0.1:1/x?sslmode=disable&connect_timeout=1", false},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := postgres.Open(ctx, tc.url, postgres.Options{})
		cancel()
		if err == nil {
			t.Fatalf("Open(%q) succeeded", tc.url)
		}
		refused := strings.Contains(err.Error(), "is not on this machine") && strings.Contains(err.Error(), "sslmode=verify-full")
		if refused != tc.refused {
			t.Errorf("Open(%q): %v; want refused = %v", tc.url, err, tc.refused)
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("the error shows the password: %v", err)
		}
	}
}

// TestConcurrentRecoveryAdoptsEachOrphanOnce: two hosts adopting a dead
// host's entries at the same instant take each one exactly once.
func TestConcurrentRecoveryAdoptsEachOrphanOnce(t *testing.T) {
	url := pgtest.Cluster(t).NewDatabase(t)
	ctx := context.Background()
	dead, err := postgres.Open(ctx, url, postgres.Options{Host: "dead"})
	if err != nil {
		t.Fatal(err)
	}
	const n = 200
	for i := range n {
		r, err := dead.Accept(ctx, store.Inbound{Instance: "tg", ChatID: "c", MessageID: strconv.Itoa(i)})
		if err != nil {
			t.Fatal(err)
		}
		if err := dead.Begin(ctx, "s"+strconv.Itoa(i%7), r.ID); err != nil {
			t.Fatal(err)
		}
	}
	dead.Close() // it never held a host lease: everything it owns is orphaned
	var hosts [2]*postgres.DB
	for i := range hosts {
		d, err := postgres.Open(ctx, url, postgres.Options{Host: "h" + strconv.Itoa(i)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		hosts[i] = d
	}
	var recs [2]store.Recovery
	var wg sync.WaitGroup
	for i, d := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := d.AcquireLease(ctx, store.LeaseRequest{Name: store.HostLeasePrefix + "h" + strconv.Itoa(i), Holder: "h" + strconv.Itoa(i), TTL: time.Hour}); err != nil {
				t.Error(err)
			}
			r, err := d.Recover(ctx, store.RecoverOptions{})
			if err != nil {
				t.Error(err)
			}
			recs[i] = r
		}()
	}
	wg.Wait()
	seen := map[int64]string{}
	for i, r := range recs {
		for _, e := range r.Resume {
			if other, ok := seen[e.ID]; ok {
				t.Fatalf("entry %d adopted by %s and h%d", e.ID, other, i)
			}
			seen[e.ID] = "h" + strconv.Itoa(i)
		}
	}
	if len(seen) != n {
		t.Fatalf("%d of %d orphans adopted (h0 %d, h1 %d)", len(seen), n, len(recs[0].Resume), len(recs[1].Resume))
	}
	t.Logf("h0 adopted %d, h1 %d", len(recs[0].Resume), len(recs[1].Resume))
}

// TestMigrationAgentKeys: the sessions, queued entries and placements of a
// database made before session keys carried the agent are the default
// agent's afterwards.
func TestMigrationAgentKeys(t *testing.T) {
	url := pgtest.Cluster(t).NewDatabase(t)
	ctx := context.Background()
	d := open(t, url, nil)
	migrationtest.SeedAgentKeys(t, d)
	// Back to schema 5: no running totals with sessions (10), no sender
	// names with pairing codes (9), no audit trail (8), no ledger (7),
	// session keys without their agent (6).
	if _, err := d.Pool().Exec(ctx, undoMigration13+`; `+undoMigration12+`; `+undoMigration11+`; `+undoMigration10+`; ALTER TABLE pairing_codes DROP COLUMN sender_name, DROP COLUMN sender_username; DROP TABLE audit; DROP TABLE usage`); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Pool().Exec(ctx, `UPDATE clawhost_schema SET version = $1`, 5); err != nil {
		t.Fatal(err)
	}
	d.Close()
	d = open(t, url, nil)
	migrationtest.CheckAgentKeys(t, d)
}

// undoMigration13 takes a database back from schema 13 to 12: journal
// entries without the began mark and the launch count.
const undoMigration13 = `ALTER TABLE journal DROP COLUMN began, DROP COLUMN launches`

// undoMigration12 takes a database back from schema 12 to 11: no stored
// tool results.
const undoMigration12 = `DROP TABLE tool_results`

// undoMigration11 takes a database back from schema 11 to 10: chunks
// without parts of their own.
const undoMigration11 = `ALTER TABLE reply_chunks DROP COLUMN format, DROP COLUMN attach`

// undoMigration10 takes a database back from schema 10 to 9: ledger rows
// without the estimate flag, sessions without claude's running total.
const undoMigration10 = `ALTER TABLE usage DROP COLUMN estimate; ALTER TABLE sessions DROP COLUMN claude_cost_usd, DROP COLUMN claude_cost_of`

// TestMigrationTurnCosts: a ledger of schema 9 stored claude's running
// total as each turn's cost. The migration makes each row the difference
// to the previous priced row of its chat (not when that is larger: a new
// session began), prices a cut turn's tokens (an unknown "opus" at $15/M
// input: 100k in, 1k out is $1.575), and marks every row an estimate.
func TestMigrationTurnCosts(t *testing.T) {
	url := pgtest.Cluster(t).NewDatabase(t)
	ctx := context.Background()
	d := open(t, url, nil)
	if _, err := d.Pool().Exec(ctx, undoMigration13+`; `+undoMigration12+`; `+undoMigration11+`; `+undoMigration10); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Pool().Exec(ctx, `UPDATE clawhost_schema SET version = $1`, 9); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	for i, r := range migrationtest.TurnCostRows {
		if _, err := d.Pool().Exec(ctx, `INSERT INTO usage(journal_id, at, agent, instance, chat_id, sender, model, input_tokens, output_tokens,
			cache_read_tokens, cache_creation_tokens, cost_usd, duration_ns, outcome) VALUES ($1, $2, 'main', 'tg', $3, 'tg:1', 'opus', 100000, 1000, 0, 0, $4, 1, $5)`,
			i+1, t0.Add(time.Duration(i)*time.Minute).UnixNano(), r.Chat, r.Total, r.Outcome); err != nil {
			t.Fatal(err)
		}
	}
	d.Close()
	d = open(t, url, nil)
	migrationtest.CheckTurnCosts(t, d)
}
