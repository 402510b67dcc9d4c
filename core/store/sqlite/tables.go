package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/clawhost/clawhost/core/store/tables"
)

// shared is the row layer's methods, embedded in DB under this name.
type shared = tables.Store

// tablesRead is the row layer's reader for one call: the prepared
// statements of the read pool, or (adhoc) the pool unprepared.
func (d *DB) tablesRead(ctx context.Context, adhoc bool) tables.Reader {
	if adhoc {
		return d.adhoc(ctx)
	}
	return d.reader(ctx)
}

// tablesWrite runs a write of the row layer in the writer's batch:
// durable ones wait for the sync.
func (d *DB) tablesWrite(ctx context.Context, w tables.Write, fn func(tables.Tx) error) error {
	run := d.w.do
	if w.Durable {
		run = d.w.durable
	}
	return run(ctx, func(t *wtx) error { return fn(tablesTx{t}) })
}

// tablesTx is the writer's batch transaction as the shared row layer
// (core/store/tables) sees it.
type tablesTx struct{ t *wtx }

func (x tablesTx) Exec(query string, args ...any) (int64, error) { return x.t.execN(query, args...) }

func (x tablesTx) Scan(query string, args []any, dest ...any) error {
	return noRows(x.t.scan(query, args, dest...))
}

func (x tablesTx) Query(query string, args ...any) (tables.Rows, error) {
	rows, err := x.t.query(query, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

// tablesReader is the read connections as the row layer sees them.
type tablesReader struct {
	ctx context.Context
	d   *DB
}

// reader is the row layer's view of d's read connections for one call.
func (d *DB) reader(ctx context.Context) tablesReader { return tablesReader{ctx: ctx, d: d} }

func (x tablesReader) Scan(query string, args []any, dest ...any) error {
	row, err := x.d.queryRow(x.ctx, query, args...)
	if err != nil {
		return err
	}
	return noRows(row.Scan(dest...))
}

func (x tablesReader) Query(query string, args ...any) (tables.Rows, error) {
	rows, err := x.d.query(x.ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

// tablesAdhoc is the read pool for a query whose text changes from call to
// call (a filter's WHERE): run unprepared, so the statement cache keeps
// only the constant queries.
type tablesAdhoc struct {
	ctx context.Context
	d   *DB
}

// adhoc is the row layer's view of d's read pool for one call's unprepared
// queries.
func (d *DB) adhoc(ctx context.Context) tablesAdhoc { return tablesAdhoc{ctx: ctx, d: d} }

func (x tablesAdhoc) Scan(query string, args []any, dest ...any) error {
	return noRows(x.d.rdb.QueryRowContext(x.ctx, query, args...).Scan(dest...))
}

func (x tablesAdhoc) Query(query string, args ...any) (tables.Rows, error) {
	rows, err := x.d.rdb.QueryContext(x.ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

// tablesReadTx is a read transaction of the read pool as the row layer
// sees it; each query counts toward Statements.
type tablesReadTx struct {
	ctx context.Context
	tx  *sql.Tx
	d   *DB
}

func (x tablesReadTx) Scan(query string, args []any, dest ...any) error {
	x.d.reads.Add(1)
	return noRows(x.tx.QueryRowContext(x.ctx, query, args...).Scan(dest...))
}

func (x tablesReadTx) Query(query string, args ...any) (tables.Rows, error) {
	x.d.reads.Add(1)
	rows, err := x.tx.QueryContext(x.ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

// sqlRows are database/sql's rows as tables.Rows.
type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { _ = r.Rows.Close() }

// noRows is err with database/sql's "no rows" as the row layer's.
func noRows(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return tables.ErrNoRows
	}
	return err
}
