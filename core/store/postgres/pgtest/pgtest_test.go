package pgtest_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/clawhost/clawhost/core/store/postgres/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestDatabasesAreSeparate: two databases of one cluster share nothing.
func TestDatabasesAreSeparate(t *testing.T) {
	s := pgtest.Cluster(t)
	ctx := context.Background()
	a, err := pgx.Connect(ctx, s.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(ctx)
	b, err := pgx.Connect(ctx, s.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(ctx)
	if _, err := a.Exec(ctx, `CREATE TABLE x (v int)`); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := b.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE tablename = 'x'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the second database sees the first's table: %d, %v", n, err)
	}
}
