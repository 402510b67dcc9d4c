package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/clawhost/clawhost/core/store"
)

// writer owns the only read-write connection and runs every write. It
// collects the operations submitted while the previous batch was committing
// and commits them together (group commit).
type writer struct {
	conn     *sql.Conn
	reqs     chan *op
	maxBatch int
	done     chan struct{}

	mu     sync.RWMutex // held for reading while submitting, for writing by close
	closed bool

	stmts map[string]*sql.Stmt // prepared on conn, used only by the writer goroutine

	// ran counts the statements the writer ran (BEGIN and COMMIT too);
	// see DB.Statements.
	ran atomic.Int64

	dedupeMax int
	dedupeN   int   // committed number of dedupe rows (an upper bound, see pruneDedupe)
	lastID    int64 // highest journal id ever allocated

	// sessions receives the sessions each transaction wrote, once it
	// committed (see sessionCache).
	sessions *sessionCache

	// sync makes every commit so far durable (it fsyncs the WAL file); nil
	// (Options.Synchronous "NORMAL"): nothing is fsynced at commit. The
	// connection itself runs synchronous=NORMAL: commits never wait for
	// the disk, and the durable operations of a batch wait for a sync the
	// syncer goroutine runs after the commit, while the writer goes on
	// with the next batch.
	sync    func() error
	syncs   chan []*op // committed batches' durable operations, for the syncer
	synced  chan struct{}
	pending []*op // durable operations committed, their sync not started
}

// op is one write. fn runs inside the batch transaction on the writer
// goroutine and must not call the store. When it returns an error the batch
// is rolled back and every operation re-run in a transaction of its own, so
// a failing fn never leaves a partial change; fn may therefore run twice
// and must only set its results, not act on the outside.
type op struct {
	ctx     context.Context
	fn      func(*wtx) error
	raw     func(*sql.Conn) error // instead of fn: runs on the connection outside any transaction (writer.raw)
	durable bool                  // see writer.durable
	err     error
	done    chan struct{}
	// committed, when not nil, is closed once a durable op committed, before
	// its fsync (writer.early); done is closed after the fsync.
	committed chan struct{}
}

// wtx is what an op sees: the batch transaction.
type wtx struct {
	w           *writer
	dedupeDelta int
	ids         int64 // journal ids allocated in this transaction
	// sessions written in this transaction; they are published once it
	// commits and forgotten if it rolls back.
	sessions map[string]store.Session
}

// session returns key's session as this transaction sees it, when it is
// known without reading the table.
func (t *wtx) session(key string) (store.Session, bool) {
	if s, ok := t.sessions[key]; ok {
		return clone(s), true
	}
	s, ok, _ := t.w.sessions.get(key)
	return s, ok
}

// wroteSession records a session written in this transaction.
func (t *wtx) wroteSession(s store.Session) {
	if t.sessions == nil {
		t.sessions = map[string]store.Session{}
	}
	t.sessions[s.Key] = clone(s)
}

// nextID allocates a journal id. Ids come from the writer, not from
// SQLite, so that Accept can write the dedupe key before the entry; they
// only become final when the transaction commits.
func (t *wtx) nextID() int64 {
	t.ids++
	return t.w.lastID + t.ids
}

func newWriter(ctx context.Context, conn *sql.Conn, maxBatch, dedupeMax int, sync func() error, sessions *sessionCache) (*writer, error) {
	w := &writer{
		conn:      conn,
		reqs:      make(chan *op, maxBatch),
		maxBatch:  maxBatch,
		done:      make(chan struct{}),
		stmts:     map[string]*sql.Stmt{},
		sessions:  sessions,
		dedupeMax: dedupeMax,
		sync:      sync,
		syncs:     make(chan []*op),
		synced:    make(chan struct{}),
	}
	if _, err := conn.ExecContext(ctx, "PRAGMA synchronous = NORMAL"); err != nil {
		return nil, fmt.Errorf("set synchronous: %w", err)
	}
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM dedupe").Scan(&w.dedupeN); err != nil {
		return nil, fmt.Errorf("count dedupe keys: %w", err)
	}
	// AUTOINCREMENT keeps sqlite_sequence at the highest id ever used, also
	// after the newest entries were pruned: ids are never reused.
	if err := conn.QueryRowContext(ctx, `SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'journal'), 0),
		coalesce((SELECT max(id) FROM journal), 0))`).Scan(&w.lastID); err != nil {
		return nil, fmt.Errorf("read last journal id: %w", err)
	}
	go w.syncer()
	go w.loop()
	return w, nil
}

// do submits fn and waits until its batch committed (or failed). It returns
// ctx.Err() without running fn if ctx ends before fn started; see the
// package documentation for the guarantees once fn started. The commit is
// not fsynced: it survives the death of the process, and an operating-system
// crash once a later durable commit (or a checkpoint) returned.
func (w *writer) do(ctx context.Context, fn func(*wtx) error) error {
	return w.submit(ctx, fn, false)
}

// durable is do for a write whose commit must also survive an
// operating-system crash or power loss before the caller acts on it
// outside the process: the accept the plugin's ack stands on, the send
// attempt a platform send stands on. It returns once an fsync of the WAL
// that started after its commit returned, which makes every earlier
// commit durable too (the WAL is written in order). One fsync serves every
// durable write committed while the previous one ran.
func (w *writer) durable(ctx context.Context, fn func(*wtx) error) error {
	return w.submit(ctx, fn, true)
}

// raw runs fn on the writer's connection outside any transaction (before
// the transaction of the batch it joins) and waits for it: for what a
// transaction must not hold (PRAGMA shrink_memory). Its statements are
// not counted (ran).
func (w *writer) raw(ctx context.Context, fn func(*sql.Conn) error) error {
	return w.queue(ctx, &op{ctx: ctx, raw: fn, done: make(chan struct{})})
}

// early is durable returning at the commit, which survives the death of
// the process: synced waits for the fsync that makes it survive a power
// loss too, and returns its error. The caller may act inside the process
// meanwhile (a later durable write's fsync covers this commit too, the WAL
// being written in order) and acts outside it on the strength of the
// write only once synced returned nil.
func (w *writer) early(ctx context.Context, fn func(*wtx) error) (synced func() error, err error) {
	o := &op{ctx: ctx, fn: fn, durable: true, done: make(chan struct{}), committed: make(chan struct{})}
	if err := w.enqueue(ctx, o); err != nil {
		return nil, err
	}
	select {
	case <-o.committed:
		return func() error { <-o.done; return o.err }, nil
	case <-o.done: // failed, or no fsync (Synchronous NORMAL)
		return func() error { return nil }, o.err
	}
}

func (w *writer) submit(ctx context.Context, fn func(*wtx) error, durable bool) error {
	return w.queue(ctx, &op{ctx: ctx, fn: fn, durable: durable, done: make(chan struct{})})
}

func (w *writer) queue(ctx context.Context, o *op) error {
	if err := w.enqueue(ctx, o); err != nil {
		return err
	}
	// Once queued, the op is always resolved by the writer (it checks the
	// op's ctx before running it), so waiting here cannot hang.
	<-o.done
	return o.err
}

// enqueue hands o to the writer, which resolves it.
func (w *writer) enqueue(ctx context.Context, o *op) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		return store.ErrClosed
	}
	select {
	case w.reqs <- o:
	case <-ctx.Done():
		w.mu.RUnlock()
		return ctx.Err()
	}
	w.mu.RUnlock()
	return nil
}

func (w *writer) close() {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.reqs)
	}
	w.mu.Unlock()
	<-w.done
}

func (w *writer) loop() {
	defer close(w.done)
	defer func() {
		w.flush(true)
		close(w.syncs)
		<-w.synced
		for _, s := range w.stmts {
			s.Close()
		}
		w.conn.Close()
	}()
	batch := make([]*op, 0, w.maxBatch)
	for {
		var o *op
		var ok bool
		select {
		case o, ok = <-w.reqs:
		default:
			// Idle: hand the committed durable writes to the syncer (when
			// it is free) while waiting for more.
			if len(w.pending) > 0 {
				select {
				case w.syncs <- w.pending:
					w.pending = nil
					o, ok = <-w.reqs
				case o, ok = <-w.reqs:
				}
			} else {
				o, ok = <-w.reqs
			}
		}
		if !ok {
			return
		}
		batch = append(batch[:0], o)
	fill:
		for len(batch) < w.maxBatch {
			select {
			case o, ok := <-w.reqs:
				if !ok {
					break fill
				}
				batch = append(batch, o)
			default:
				break fill
			}
		}
		w.run(batch)
		var early []*op // writer.early's ops of this batch
		for i, o := range batch {
			if o.durable && o.err == nil && w.sync != nil {
				if o.committed != nil {
					early = append(early, o)
				}
				w.pending = append(w.pending, o) // resolved by the syncer
			} else {
				close(o.done)
			}
			batch[i] = nil
		}
		w.flush(false)
		// The early writers are told last: on one processor the goroutine
		// readied last runs next, so they go on before the syncer's fsync,
		// which would hold the processor until the runtime takes it back.
		for _, o := range early {
			close(o.committed)
		}
	}
}

// flush hands the durable writes committed so far to the syncer: at once
// when it is free, else they join the next sync (wait: until it takes
// them).
func (w *writer) flush(wait bool) {
	if len(w.pending) == 0 {
		return
	}
	if wait {
		w.syncs <- w.pending
	} else {
		select {
		case w.syncs <- w.pending:
		default:
			return // a sync is running; the next one covers these too (unbuffered: the syncer takes them only when free)
		}
	}
	w.pending = nil
}

// syncer fsyncs the WAL for each group of committed durable writes and
// then lets their callers return. A write whose fsync failed returns the
// error: its commit is visible but may not survive a power loss (an
// Accept's caller then nacks, and the redelivery finds the key stored and
// is acked after a sync that worked).
func (w *writer) syncer() {
	defer close(w.synced)
	for ops := range w.syncs {
		err := w.sync()
		if err != nil {
			err = fmt.Errorf("fsync: %w", err)
		}
		for _, o := range ops {
			o.err = err
			close(o.done)
		}
	}
}

// run executes a batch in one transaction. If any op fails, the batch is
// rolled back and each op runs in a transaction of its own.
func (w *writer) run(batch []*op) {
	live := batch[:0:0]
	for _, o := range batch {
		if err := o.ctx.Err(); err != nil {
			o.err = err
			continue
		}
		if o.raw != nil {
			o.err = o.raw(w.conn) // before the transaction, outside it
			continue
		}
		live = append(live, o)
	}
	if len(live) == 0 {
		return
	}
	if len(live) > 1 {
		err := w.tx(func(t *wtx) error {
			for _, o := range live {
				if err := o.fn(t); err != nil {
					return err
				}
			}
			return nil
		})
		if err == nil {
			return
		}
	}
	for _, o := range live {
		o.err = w.tx(o.fn)
	}
}

// tx runs fn in one transaction and commits, with the store's housekeeping
// (dedupe cap) just before the commit.
func (w *writer) tx(fn func(*wtx) error) (err error) {
	// The writer's own context: a caller's cancellation must not abort a
	// batch shared with others.
	ctx := context.Background()
	w.ran.Add(2) // BEGIN and COMMIT (or ROLLBACK)
	// BEGIN and COMMIT are prepared once, as every statement of the
	// writer: a query string is compiled again at each call (modernc's
	// conn.exec), about a tenth of a warm turn's store CPU for these two.
	if _, err := w.execPrepared(ctx, "BEGIN IMMEDIATE"); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	t := &wtx{w: w}
	defer func() {
		if err != nil {
			if _, rerr := w.conn.ExecContext(ctx, "ROLLBACK"); rerr != nil && !isNoTx(rerr) {
				err = errors.Join(err, fmt.Errorf("rollback: %w", rerr))
			}
		}
	}()
	if err := fn(t); err != nil {
		return err
	}
	if err := t.pruneDedupe(); err != nil {
		return err
	}
	if _, err := w.execPrepared(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	w.dedupeN += t.dedupeDelta
	w.lastID += t.ids
	if len(t.sessions) > 0 {
		w.sessions.publish(t.sessions)
	}
	return nil
}

func isNoTx(err error) bool {
	// SQLite rolls back by itself after some errors (e.g. SQLITE_FULL);
	// the explicit ROLLBACK then reports that no transaction is active.
	return err != nil && strings.Contains(err.Error(), "no transaction is active")
}

// stmt returns query prepared on the writer's connection; every caller
// runs it once (which counts it in writer.ran).
func (t *wtx) stmt(query string) (*sql.Stmt, error) {
	t.w.ran.Add(1)
	return t.w.prepared(query)
}

// prepared is query prepared on the writer's connection, once.
func (w *writer) prepared(query string) (*sql.Stmt, error) {
	if s, ok := w.stmts[query]; ok {
		return s, nil
	}
	s, err := w.conn.PrepareContext(context.Background(), query)
	if err != nil {
		return nil, err
	}
	w.stmts[query] = s
	return s, nil
}

// execPrepared runs query, prepared once, outside the statement count.
func (w *writer) execPrepared(ctx context.Context, query string) (sql.Result, error) {
	s, err := w.prepared(query)
	if err != nil {
		return nil, err
	}
	return s.ExecContext(ctx)
}

func (t *wtx) exec(query string, args ...any) (sql.Result, error) {
	s, err := t.stmt(query)
	if err != nil {
		return nil, err
	}
	return s.ExecContext(context.Background(), args...)
}

// scan runs a single-row query and scans it into dest; no row is
// sql.ErrNoRows.
func (t *wtx) scan(query string, args []any, dest ...any) error {
	s, err := t.stmt(query)
	if err != nil {
		return err
	}
	return s.QueryRowContext(context.Background(), args...).Scan(dest...)
}

func (t *wtx) query(query string, args ...any) (*sql.Rows, error) {
	s, err := t.stmt(query)
	if err != nil {
		return nil, err
	}
	return s.QueryContext(context.Background(), args...)
}

// execN runs an exec and returns the number of rows it changed.
func (t *wtx) execN(query string, args ...any) (int64, error) {
	r, err := t.exec(query, args...)
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}

const qDedupePrune = `DELETE FROM dedupe WHERE key IN (
	SELECT key FROM dedupe ORDER BY seen_at, rowid LIMIT ?)`

// pruneDedupe keeps the dedupe table at its cap, deleting the oldest keys.
// The running count over-estimates (a key re-stored after its TTL is
// counted as new), so when it passes the cap the real count is taken first.
func (t *wtx) pruneDedupe() error {
	if t.w.dedupeN+t.dedupeDelta <= t.w.dedupeMax {
		return nil
	}
	var n int
	if err := t.scan(`SELECT count(*) FROM dedupe`, nil, &n); err != nil {
		return fmt.Errorf("count dedupe keys: %w", err)
	}
	if over := n - t.w.dedupeMax; over > 0 {
		del, err := t.execN(qDedupePrune, over)
		if err != nil {
			return fmt.Errorf("prune dedupe keys: %w", err)
		}
		n -= int(del)
	}
	t.dedupeDelta = n - t.w.dedupeN
	return nil
}
