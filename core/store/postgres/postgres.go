package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/tables"
)

// Defaults of [Options] that are this engine's own.
const (
	// DefaultMaxConns is [Options.MaxConns] when zero.
	DefaultMaxConns = 16
	// DefaultWriteTimeout is [Options.WriteTimeout] when zero.
	DefaultWriteTimeout = 30 * time.Second
)

var _ store.Store = (*DB)(nil)

// Options configure [Open]. The zero value is usable.
type Options struct {
	// Now is the clock used for TTLs and stamps. Nil means time.Now.
	Now func() time.Time
	// Logger receives notices. Nil discards.
	Logger hclog.Logger
	// DedupeTTL: zero means store.DefaultDedupeTTL.
	DedupeTTL time.Duration
	// MaxPendingPairings: zero means store.DefaultMaxPendingPairings.
	MaxPendingPairings int
	// MaxConns bounds the connection pool. Zero means DefaultMaxConns.
	MaxConns int
	// Host is this host's id, stamped as the owner of the entries it
	// writes (store.Entry.Owner); "" for none.
	Host string
	// WriteTimeout bounds a write once it started (it no longer follows
	// the caller's context then; see the store contract, Context). Zero
	// means DefaultWriteTimeout.
	WriteTimeout time.Duration
}

// DB is the PostgreSQL implementation of [store.Store]. Create it with
// [Open].
type DB struct {
	// shared are the methods written once on the row layer
	// (core/store/tables); this file's and its siblings' are the rest.
	shared

	opts Options
	now  func() time.Time
	log  hclog.Logger
	pool *pgxpool.Pool

	isClosed atomic.Bool
}

// Open connects to the database at url (a PostgreSQL URL or key=value
// string), migrates its schema and returns the store. ctx bounds the
// opening only. The URL's password never appears in an error.
func Open(ctx context.Context, url string, opts Options) (*DB, error) {
	if url == "" {
		return nil, errors.New("open store: empty PostgreSQL url")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.DedupeTTL <= 0 {
		opts.DedupeTTL = store.DefaultDedupeTTL
	}
	if opts.MaxPendingPairings <= 0 {
		opts.MaxPendingPairings = store.DefaultMaxPendingPairings
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = DefaultMaxConns
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = DefaultWriteTimeout
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx's parse errors quote the string; say only what was wrong.
		return nil, errors.New("open store: the PostgreSQL url does not parse (expected postgres://user@host:port/db?sslmode=... or host=... dbname=...)")
	}
	if host, ok := plainRemote(&cfg.ConnConfig.Config); !ok {
		return nil, fmt.Errorf("open store: the PostgreSQL server %s is not on this machine and the url lets the connection go without TLS: add sslmode=verify-full (or at least sslmode=require) to it", host)
	}
	cfg.MaxConns = int32(opts.MaxConns)
	cfg.ConnConfig.RuntimeParams["application_name"] = "clawhost"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", Redact(url), err)
	}
	d := &DB{opts: opts, now: opts.Now, log: opts.Logger.Named("store"), pool: pool}
	d.shared = tables.NewStore(tables.Engine{Read: d.tablesRead, Write: d.tablesWrite, Start: d.start, Now: opts.Now, Host: opts.Host,
		MaxPendingPairings: opts.MaxPendingPairings, Journal: journal, Sessions: sessions, ShareLock: " FOR SHARE"})
	if err := d.migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open store %s: %w", Redact(url), err)
	}
	return d, nil
}

// plainRemote finds a host of c (the first one or a fallback) that is
// not on this machine and may be reached without TLS: sslmode unset,
// disable, allow or prefer. A Unix socket, localhost and loopback
// addresses are on this machine. ok is false when there is one; host
// names it. The url's password is never part of host.
func plainRemote(c *pgconn.Config) (host string, ok bool) {
	local := func(h string) bool {
		if strings.HasPrefix(h, "/") || strings.EqualFold(h, "localhost") {
			return true
		}
		ip := net.ParseIP(h)
		return ip != nil && ip.IsLoopback()
	}
	if !local(c.Host) && c.TLSConfig == nil {
		return c.Host, false
	}
	for _, f := range c.Fallbacks {
		if !local(f.Host) && f.TLSConfig == nil {
			return f.Host, false
		}
	}
	return "", true
}

// Close closes the pool; writes in flight finish first. Calling it again
// returns nil.
func (d *DB) Close() error {
	d.isClosed.Store(true)
	d.pool.Close()
	return nil
}

// closed turns the error of a call after Close (pgxpool refuses with an
// error of its own) into store.ErrClosed.
func (d *DB) closed(err error) error {
	if err != nil && d.isClosed.Load() {
		return fmt.Errorf("%w (%v)", store.ErrClosed, err)
	}
	return err
}

// Pool is the engine's connection pool, for the lease and host tables
// that live beside the store's (see package lease).
func (d *DB) Pool() *pgxpool.Pool { return d.pool }

// write runs fn in one transaction, all or none. A context that ended
// before the write started is returned without running fn; once started
// the write no longer follows ctx (so it is never half-applied because a
// caller gave up) but is bounded by Options.WriteTimeout. fn may run more
// than once: a serialization failure or deadlock is retried.
func (d *DB) write(ctx context.Context, fn func(tx pgx.Tx) error) error {
	wctx, cancel, err := d.begin(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	for attempt := 0; ; attempt++ {
		err := pgx.BeginFunc(wctx, d.pool, fn)
		if err != nil && attempt < 10 && retryable(err) {
			continue
		}
		return d.closed(err)
	}
}

// begin is how every write starts: refused if ctx already ended, then
// detached from it and bounded by Options.WriteTimeout instead (see
// write).
func (d *DB) begin(ctx context.Context) (context.Context, context.CancelFunc, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.opts.WriteTimeout)
	return wctx, cancel, nil
}

// exec runs one statement on its own (its own implicit transaction): the
// single-statement writes need no BEGIN and COMMIT round trips.
func (d *DB) exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	wctx, cancel, err := d.begin(ctx)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	defer cancel()
	tag, err := d.pool.Exec(wctx, sql, args...)
	return tag, d.closed(err)
}

// retryable reports a serialization failure or a deadlock: the
// transaction was rolled back and may simply run again.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}
