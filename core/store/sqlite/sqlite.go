package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/tables"
)

// File names inside the data directory.
const (
	// DBFile is the SQLite database; -wal and -shm files sit next to it.
	DBFile = "clawhost.db"
	// LockFile is held with an exclusive flock while a [DB] is open.
	LockFile = "clawhost.db.lock"
)

// Defaults of [Options] that are this engine's own; the contract's
// (dedupe TTL, pending pairings) are in core/store.
const (
	// DefaultDedupeMax is [Options.DedupeMax] when zero.
	DefaultDedupeMax = 200_000
	// DefaultBusyTimeout is [Options.BusyTimeout] when zero.
	DefaultBusyTimeout = 5 * time.Second
	// DefaultMaxBatch is [Options.MaxBatch] when zero.
	DefaultMaxBatch = 1024
)

var _ store.Store = (*DB)(nil)

// Options configure [Open]. The zero value is usable.
type Options struct {
	// Now is the clock used for TTLs, received-at and updated-at stamps.
	// Nil means time.Now.
	Now func() time.Time
	// Logger receives notices such as tightened permissions. Nil discards.
	Logger hclog.Logger
	// DedupeTTL is how long an accepted dedupe key rejects duplicates.
	// Zero means store.DefaultDedupeTTL.
	DedupeTTL time.Duration
	// DedupeMax caps the number of stored dedupe keys; the oldest are
	// pruned. Zero means DefaultDedupeMax.
	DedupeMax int
	// Synchronous: "FULL" (default) fsyncs the commits that need it (the
	// accept, a send attempt; see the package documentation, Durability);
	// "NORMAL" fsyncs none (checkpoints only).
	Synchronous string
	// BusyTimeout bounds how long a connection waits on a lock held by
	// another connection (e.g. a checkpoint). Zero means DefaultBusyTimeout.
	BusyTimeout time.Duration
	// MaxBatch bounds the number of operations in one group commit. Zero
	// means DefaultMaxBatch.
	MaxBatch int
	// Readers is the size of the read-only connection pool. Zero means
	// min(GOMAXPROCS, 4).
	Readers int
	// MaxPendingPairings caps unexpired pairing codes per instance. Zero
	// means store.DefaultMaxPendingPairings.
	MaxPendingPairings int
	// Host is this host's id, stamped as the owner of the entries it
	// writes (store.Entry.Owner); "" for none.
	Host string
	// IdleRelease is how long the store runs no statement before it
	// gives its idle memory back (closes the idle readers, empties the
	// writer's page cache; see releaseIdle). Zero means
	// DefaultIdleRelease; negative never.
	IdleRelease time.Duration
}

// DB is the SQLite implementation of [store.Store]. Create it with [Open].
type DB struct {
	// shared are the methods written once on the row layer
	// (core/store/tables); this file's and its siblings' are the rest.
	shared

	opts Options
	now  func() time.Time
	log  hclog.Logger
	dir  string

	rdb  *sql.DB // query-only pool
	wdb  *sql.DB // one read-write connection, owned by the writer
	w    *writer
	lock *os.File
	wal  *os.File // the WAL, opened for the writer's fsyncs (Synchronous FULL)

	rstmtMu sync.Mutex
	rstmts  map[string]*sql.Stmt
	// reads counts the statements run on the read pool; see Statements.
	reads atomic.Int64

	sessions *sessionCache

	// idleDone stops releaseIdle, idleWG waits for it; released, when
	// set (tests), is called after each release.
	idleDone chan struct{}
	idleWG   sync.WaitGroup
	released func()

	closeOnce sync.Once
	closeErr  error
}

// Open opens (creating if needed) the database in dir, migrates its schema
// and starts the writer. ctx bounds the opening only.
func Open(ctx context.Context, dir string, opts Options) (*DB, error) {
	if dir == "" {
		return nil, errors.New("open store: empty data dir")
	}
	if strings.ContainsAny(dir, "?#") {
		return nil, fmt.Errorf("open store %s: data dir must not contain '?' or '#'", dir)
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
	if opts.DedupeMax <= 0 {
		opts.DedupeMax = DefaultDedupeMax
	}
	switch s := strings.ToUpper(opts.Synchronous); s {
	case "":
		opts.Synchronous = "FULL"
	case "NORMAL", "FULL":
		opts.Synchronous = s
	default:
		return nil, fmt.Errorf("open store: synchronous must be NORMAL or FULL, not %q", opts.Synchronous)
	}
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = DefaultBusyTimeout
	}
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = DefaultMaxBatch
	}
	if opts.Readers <= 0 {
		opts.Readers = min(runtime.GOMAXPROCS(0), 4)
	}
	if opts.IdleRelease == 0 {
		opts.IdleRelease = DefaultIdleRelease
	}
	if opts.MaxPendingPairings <= 0 {
		opts.MaxPendingPairings = store.DefaultMaxPendingPairings
	}
	log := opts.Logger.Named("store")

	if err := prepareDir(dir, log); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	d := &DB{opts: opts, now: opts.Now, log: log, dir: dir, lock: lock, rstmts: map[string]*sql.Stmt{}, sessions: newSessionCache()}
	d.shared = tables.NewStore(tables.Engine{Read: d.tablesRead, Write: d.tablesWrite, Start: d.start, Now: opts.Now, Host: opts.Host,
		MaxPendingPairings: opts.MaxPendingPairings, Journal: journal, Sessions: sessions})
	if err := d.open(ctx); err != nil {
		d.release()
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	d.idleDone = make(chan struct{})
	if opts.IdleRelease > 0 {
		d.idleWG.Go(func() { d.releaseIdle(opts.IdleRelease, d.idleDone) })
	}
	return d, nil
}

func (d *DB) open(ctx context.Context) error {
	path := filepath.Join(d.dir, DBFile)
	if err := prepareFiles(path, d.log); err != nil {
		return err
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", d.opts.BusyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous("+d.opts.Synchronous+")")
	q.Add("_pragma", "journal_size_limit(67108864)")
	q.Add("_pragma", "temp_store(MEMORY)")
	var err error
	d.wdb, err = sql.Open("sqlite", path+"?"+q.Encode())
	if err != nil {
		return err
	}
	d.wdb.SetMaxOpenConns(1)
	d.wdb.SetMaxIdleConns(1)
	d.wdb.SetConnMaxIdleTime(0)
	d.wdb.SetConnMaxLifetime(0)
	conn, err := d.wdb.Conn(ctx)
	if err != nil {
		return err
	}
	if err := migrate(ctx, conn); err != nil {
		conn.Close()
		return fmt.Errorf("migrate: %w", err)
	}
	// The -wal and -shm files exist now; make sure of their modes.
	if err := prepareFiles(path, d.log); err != nil {
		conn.Close()
		return err
	}

	rq := url.Values{}
	rq.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", d.opts.BusyTimeout.Milliseconds()))
	rq.Add("_pragma", "query_only(1)")
	rq.Add("_pragma", "cache_size(-1024)")
	d.rdb, err = sql.Open("sqlite", path+"?"+rq.Encode())
	if err != nil {
		conn.Close()
		return err
	}
	d.rdb.SetMaxOpenConns(d.opts.Readers)
	d.rdb.SetMaxIdleConns(d.opts.Readers)
	if err := d.rdb.PingContext(ctx); err != nil {
		conn.Close()
		return err
	}

	var syncWAL func() error
	if d.opts.Synchronous == "FULL" {
		// The WAL exists once the connection is open in WAL mode (migrate
		// read it). fsync on any descriptor of the file flushes it, so
		// the writer's syncs use one of their own; the directory is
		// synced once, for the WAL's entry in it.
		d.wal, err = os.Open(path + "-wal")
		if err != nil {
			conn.Close()
			return fmt.Errorf("open the WAL for syncing: %w", err)
		}
		if err := syncDir(d.dir); err != nil {
			conn.Close()
			return err
		}
		wal := d.wal
		syncWAL = func() error { return syncData(wal) }
	}
	d.w, err = newWriter(ctx, conn, d.opts.MaxBatch, d.opts.DedupeMax, syncWAL, d.sessions)
	if err != nil {
		conn.Close()
		return err
	}
	return nil
}

// Close stops the writer after the operations already submitted, closes the
// connections and releases the directory lock.
func (d *DB) Close() error {
	d.closeOnce.Do(func() {
		if d.idleDone != nil {
			close(d.idleDone)
			d.idleWG.Wait()
		}
		if d.w != nil {
			d.w.close()
		}
		d.closeErr = d.release()
	})
	return d.closeErr
}

func (d *DB) release() error {
	var errs []error
	d.rstmtMu.Lock()
	for _, s := range d.rstmts {
		s.Close()
	}
	d.rstmts = map[string]*sql.Stmt{}
	d.rstmtMu.Unlock()
	if d.rdb != nil {
		errs = append(errs, d.rdb.Close())
	}
	if d.wdb != nil {
		errs = append(errs, d.wdb.Close())
	}
	if d.wal != nil {
		errs = append(errs, d.wal.Close())
	}
	if d.lock != nil {
		errs = append(errs, unlockDir(d.lock))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close store: %w", err)
	}
	return nil
}

// Statements is how many SQL statements the engine ran since Open on its
// hot paths — the writer's transactions (BEGIN and COMMIT included) and
// the read pool's statements — for the benchmarks' statements per
// message. The audit trail's and usage reports' queries are not counted.
func (d *DB) Statements() int64 {
	n := d.reads.Load()
	if d.w != nil {
		n += d.w.ran.Load()
	}
	return n
}

// rstmt returns a statement prepared on the read pool (database/sql
// re-prepares it per connection as needed and caches it there).
func (d *DB) rstmt(ctx context.Context, query string) (*sql.Stmt, error) {
	d.reads.Add(1) // every caller runs it once
	d.rstmtMu.Lock()
	defer d.rstmtMu.Unlock()
	if s, ok := d.rstmts[query]; ok {
		return s, nil
	}
	if d.rdb == nil {
		return nil, store.ErrClosed
	}
	s, err := d.rdb.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	d.rstmts[query] = s
	return s, nil
}

func (d *DB) queryRow(ctx context.Context, query string, args ...any) (*sql.Row, error) {
	s, err := d.rstmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return s.QueryRowContext(ctx, args...), nil
}

func (d *DB) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	s, err := d.rstmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return s.QueryContext(ctx, args...)
}
