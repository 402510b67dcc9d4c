// Package sqlitetest opens the SQLite store for the tests of the packages
// that run on it (the queue, the turn, pairing, schedules, ...): one way to
// open it, failing the test when it does not open and closing it with the
// test; and reads a journal entry back.
package sqlitetest

import (
	"context"
	"testing"

	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/sqlite"
)

// Open opens the store in dir with opts; it fails the test when the store
// does not open and closes it when the test ends.
func Open(t testing.TB, dir string, opts sqlite.Options) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// Entry reads journal entry id; it fails the test when the entry cannot be
// read.
func Entry(t testing.TB, db *sqlite.DB, id int64) store.Entry {
	t.Helper()
	e, err := db.Entry(context.Background(), id)
	if err != nil {
		t.Fatalf("entry %d: %v", id, err)
	}
	return e
}
