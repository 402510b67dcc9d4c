package sqlite

import (
	"context"
	"database/sql"
	"time"
)

// DefaultIdleRelease is [Options.IdleRelease] when zero.
const DefaultIdleRelease = time.Minute

// idleChecks is how many times per Options.IdleRelease the store looks
// whether it ran a statement: it releases between IdleRelease and
// IdleRelease·(1 + 1/idleChecks) after its last one.
const idleChecks = 4

// releaseIdle gives an idle store's memory back. SQLite's C heap (modernc's
// libc, see cheap_linux.go) holds, per connection, the schema, the
// prepared statements and the page cache; an idle host has two connections
// (the writer and one reader), about 1,270 allocations in the 2 MB libc
// mapped. Once no statement ran for Options.IdleRelease it closes the idle
// readers (the next read opens one again: its schema read and the
// statement's preparation, about 0.4 ms, once per idle period), empties the writer's page cache
// (PRAGMA shrink_memory; the writer keeps its connection and statements),
// hands libc's empty regions back to the kernel (freeing alone would
// not: libc keeps up to 4 MB of freed regions per size class resident for
// reuse) and drops its cache of the sessions of the chats active lately
// (sessionCache.release: the next turn of each reads its row). A busy
// store (a statement in every period) never does any of it.
func (d *DB) releaseIdle(every time.Duration, done <-chan struct{}) {
	t := time.NewTicker(every / idleChecks)
	defer t.Stop()
	w := idleWatch{last: d.Statements()}
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		if !w.tick(d.Statements()) {
			continue
		}
		d.releaseMemory()
		if d.released != nil {
			d.released()
		}
	}
}

// idleWatch decides, from the statement count seen every
// IdleRelease/idleChecks, when the store went idle.
type idleWatch struct {
	last     int64 // Statements at the previous tick
	quiet    int   // ticks since it last changed
	released bool  // released in this idle period
}

// tick sees the count n and reports whether to release now: the count
// stayed the same for idleChecks ticks and this idle period was not
// released yet.
func (w *idleWatch) tick(n int64) bool {
	if n != w.last {
		w.last, w.quiet, w.released = n, 0, false
		return false
	}
	w.quiet++
	if w.quiet < idleChecks || w.released {
		return false
	}
	w.released = true
	return true
}

// ReleaseMemory gives the store's memory back now, as it does by itself
// once idle for Options.IdleRelease: a benchmark that measures an idle
// host's memory calls it instead of waiting that long. Call it while no
// statement runs; one that does keeps what it needs.
func (d *DB) ReleaseMemory() { d.releaseMemory() }

// releaseMemory closes the idle readers, shrinks the writer's page cache,
// returns libc's empty regions to the kernel and drops the session cache. It runs no counted
// statement (Statements), so it does not end the idle period itself.
func (d *DB) releaseMemory() {
	d.rdb.SetMaxIdleConns(0) // closes the idle connections now
	d.rdb.SetMaxIdleConns(d.opts.Readers)
	err := d.w.raw(context.Background(), func(c *sql.Conn) error {
		_, err := c.ExecContext(context.Background(), "PRAGMA shrink_memory")
		return err
	})
	if err != nil {
		d.log.Debug("shrinking the writer's cache failed", "error", err)
	}
	if err := trimCHeap(); err != nil {
		d.log.Debug("returning SQLite's freed memory failed", "error", err)
	}
	d.sessions.release()
}
