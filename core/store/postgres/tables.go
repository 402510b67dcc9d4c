package postgres

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"

	"github.com/clawhost/clawhost/core/store/tables"
)

// shared is the row layer's methods, embedded in DB under this name.
type shared = tables.Store

// pairingLock serializes the pairing writes of every host (they are rare:
// counting an instance's codes and the wrong guesses needs a stable view).
const pairingLock = 0x70616972 // "pair"

// tablesRead is the row layer's reader for one call: the pool.
func (d *DB) tablesRead(ctx context.Context, _ bool) tables.Reader { return d.reader(ctx) }

// tablesWrite runs a write of the row layer: one statement without a
// transaction (Single), or a transaction, serialized ones behind
// pairingLock.
func (d *DB) tablesWrite(ctx context.Context, w tables.Write, fn func(tables.Tx) error) error {
	if w.Single {
		return d.single(ctx, fn)
	}
	return d.write(ctx, func(tx pgx.Tx) error {
		if w.Serialized {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, pairingLock); err != nil {
				return err
			}
		}
		return fn(tablesTx{ctx, tx})
	})
}

// tablesTx is a pgx transaction as the shared row layer (core/store/tables)
// sees it.
type tablesTx struct {
	ctx context.Context
	tx  pgx.Tx
}

func (x tablesTx) Exec(query string, args ...any) (int64, error) {
	tag, err := x.tx.Exec(x.ctx, numbered(query), args...)
	return tag.RowsAffected(), err
}

func (x tablesTx) Scan(query string, args []any, dest ...any) error {
	return noRows(x.tx.QueryRow(x.ctx, numbered(query), args...).Scan(dest...))
}

func (x tablesTx) Query(query string, args ...any) (tables.Rows, error) {
	return x.tx.Query(x.ctx, numbered(query), args...)
}

// tablesReader is the pool as the row layer sees it.
type tablesReader struct {
	ctx context.Context
	d   *DB
}

// reader is the row layer's view of d's pool for one call.
func (d *DB) reader(ctx context.Context) tablesReader { return tablesReader{ctx: ctx, d: d} }

func (x tablesReader) Scan(query string, args []any, dest ...any) error {
	return x.d.closed(noRows(x.d.pool.QueryRow(x.ctx, numbered(query), args...).Scan(dest...)))
}

func (x tablesReader) Query(query string, args ...any) (tables.Rows, error) {
	rows, err := x.d.pool.Query(x.ctx, numbered(query), args...)
	if err != nil {
		return nil, x.d.closed(err)
	}
	return rows, nil
}

// noRows is err with pgx's "no rows" as the row layer's.
func noRows(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return tables.ErrNoRows
	}
	return err
}

// numberedQueries caches numbered's rewrites: the row layer's queries are
// constants, a few dozen, but a filter's (ListAudit's, ListUsage's) change
// with it, so the cache stops growing at maxNumbered.
var (
	numberedQueries sync.Map
	numberedCount   atomic.Int32
)

const maxNumbered = 512

// numbered is query with each "?" outside a quoted string or identifier
// numbered as PostgreSQL's parameters are: $1, $2, ….
func numbered(query string) string {
	if q, ok := numberedQueries.Load(query); ok {
		return q.(string)
	}
	var b strings.Builder
	n := 0
	var quote byte
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '?':
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteByte(c)
	}
	q := b.String()
	if numberedCount.Add(1) <= maxNumbered {
		numberedQueries.Store(query, q)
	}
	return q
}

// tablesSingle is the pool as a row-layer Tx whose every statement is a
// transaction of its own: the writes that are one statement (and a read
// to explain a refusal) need no BEGIN and COMMIT round trips. Its context
// is a write's (see begin).
type tablesSingle struct {
	ctx context.Context
	d   *DB
}

func (x tablesSingle) Exec(query string, args ...any) (int64, error) {
	tag, err := x.d.pool.Exec(x.ctx, numbered(query), args...)
	return tag.RowsAffected(), x.d.closed(err)
}

func (x tablesSingle) Scan(query string, args []any, dest ...any) error {
	return tablesReader(x).Scan(query, args, dest...)
}

func (x tablesSingle) Query(query string, args ...any) (tables.Rows, error) {
	return tablesReader(x).Query(query, args...)
}

// single runs fn with the pool as a tables.Tx of one-statement
// transactions, under a write's context (begin).
func (d *DB) single(ctx context.Context, fn func(tables.Tx) error) error {
	wctx, cancel, err := d.begin(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	return fn(tablesSingle{ctx: wctx, d: d})
}
