// Package tables is the row layer both store engines share: the queries
// on a table, the mapping of its columns to core/store's types and the
// rules a write keeps (a pairing code's bounds, a guess counted), written
// once. Each engine hands it a connection to its database through Tx or
// Reader: SQLite its batch transaction and read connections, PostgreSQL a
// pgx transaction or its pool. Queries are written in the SQL both engines
// speak, with "?" for a parameter (the PostgreSQL engine numbers them); what
// only one engine says (an advisory lock, a type cast) stays in that
// engine, around the call.
//
// A table moves here whole, its engines' copies removed: see
// docs/where-a-change-goes.md ("Anything durable").
package tables

import (
	"errors"
)

// ErrNoRows is what Reader.Scan returns when the query found no row, from
// either engine.
var ErrNoRows = errors.New("no rows in result set")

// Reader runs queries: outside a transaction (an engine's read
// connections) or inside one (Tx).
type Reader interface {
	// Scan runs a single-row query and scans its row into dest;
	// ErrNoRows when it found none.
	Scan(query string, args []any, dest ...any) error
	// Query runs a query; the caller closes the rows.
	Query(query string, args ...any) (Rows, error)
}

// Tx is a write transaction: the engine commits it when the function it
// was handed returns nil (and may run that function again after a
// conflict, so it must not act outside the transaction).
type Tx interface {
	Reader
	// Exec runs a statement and returns the number of rows it changed.
	Exec(query string, args ...any) (int64, error)
}

// Rows are a query's rows: database/sql's and pgx's alike.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// collect reads every row of a query with scan, then closes the rows.
func collect[T any](rows Rows, err error, scan func(Rows) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
