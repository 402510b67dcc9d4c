package tables

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/clawhost/clawhost/core/store"
)

// Journal holds the journal's queries as one engine's schema spells them:
// the message is a column of PostgreSQL's journal and a row of SQLite's
// journal_messages, and SQLite names the condition of an open entry
// (finished_at = 0) so that its partial indexes serve.
type Journal struct {
	// Cols are an entry's columns in the order ScanEntry reads them.
	Cols string
	// qEntry, qPending, qCount and qCounts are built once, by NewJournal.
	qEntry, qPending, qCount, qCounts string
}

// NewJournal is the journal of an engine whose entry's message is the
// expression message and whose open entries are those matching open (a
// condition followed by " AND ", or "").
func NewJournal(message, open string) Journal {
	cols := `id, instance, chat_id, thread_id, message_id, dedupe_key, received_at,
	` + message + `, state, session_key, attempts, reason, updated_at, owner, began, launches`
	queued := ` FROM journal WHERE session_key = ? AND ` + open + `state = 'queued'`
	return Journal{
		Cols:     cols,
		qEntry:   `SELECT ` + cols + ` FROM journal WHERE id = ?`,
		qPending: `SELECT ` + cols + queued + ` ORDER BY id`,
		qCount:   `SELECT count(*)` + queued,
		qCounts:  `SELECT session_key, count(*) FROM journal WHERE ` + open + `state = 'queued' GROUP BY session_key`,
	}
}

// Scanner is a row: database/sql's and pgx's alike.
type Scanner interface{ Scan(dest ...any) error }

// entryRow is an entry as its columns are read.
type entryRow struct {
	e         store.Entry
	recv, upd int64
	st        string
}

// dest are the scan destinations of Journal.Cols.
func (x *entryRow) dest() []any {
	e := &x.e
	return []any{&e.ID, &e.Instance, &e.ChatID, &e.ThreadID, &e.MessageID, &e.DedupeKey, &x.recv,
		&e.Message, &x.st, &e.SessionKey, &e.Attempts, &e.Reason, &x.upd, &e.Owner, &e.Began, &e.Launches}
}

func (x *entryRow) entry() store.Entry {
	x.e.ReceivedAt, x.e.UpdatedAt, x.e.State = store.FromUnixNano(x.recv), store.FromUnixNano(x.upd), store.State(x.st)
	return x.e
}

// ScanEntry reads an entry of a query of Journal.Cols.
func ScanEntry(s Scanner) (store.Entry, error) {
	var x entryRow
	err := s.Scan(x.dest()...)
	return x.entry(), err
}

// Entries reads every entry of a query of Journal.Cols.
func Entries(rows Rows, err error) ([]store.Entry, error) {
	return collect(rows, err, func(r Rows) (store.Entry, error) { return ScanEntry(r) })
}

// Entry is [store.Journal]'s Entry, its error naming the entry.
func (j Journal) Entry(r Reader, id int64) (store.Entry, error) {
	var x entryRow
	err := r.Scan(j.qEntry, []any{id}, x.dest()...)
	if errors.Is(err, ErrNoRows) {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.Entry{}, fmt.Errorf("journal entry %d: %w", id, err)
	}
	return x.entry(), nil
}

// State is the state of entry id; store.ErrNotFound, naming the entry,
// when there is none. lock is appended to the query (" FOR SHARE" or "").
func State(r Reader, id int64, lock string) (store.State, error) {
	var s string
	err := r.Scan(`SELECT state FROM journal WHERE id = ?`+lock, []any{id}, &s)
	if errors.Is(err, ErrNoRows) {
		return "", fmt.Errorf("journal entry %d: %w", id, store.ErrNotFound)
	}
	return store.State(s), err
}

// Refuse explains why entry id could not move to state to:
// store.ErrNotFound or store.ErrBadTransition.
func Refuse(r Reader, id int64, to store.State) error {
	s, err := State(r, id, "")
	if err != nil {
		return err
	}
	return fmt.Errorf("entry %d: %w: %s → %s", id, store.ErrBadTransition, s, to)
}

// Enqueue is [store.Journal]'s Enqueue inside t at now, by host.
func Enqueue(t Tx, id int64, sessionKey string, now int64, host string) error {
	n, err := t.Exec(`UPDATE journal SET state = 'queued', session_key = ?, updated_at = ?, owner = ? WHERE id = ? AND state IN ('accepted', 'queued')`,
		sessionKey, now, host, id)
	if err != nil || n == 1 {
		return err
	}
	return Refuse(t, id, store.StateQueued)
}

// CountPending is [store.Journal]'s CountPending.
func (j Journal) CountPending(r Reader, sessionKey string) (int, error) {
	var n int
	if err := r.Scan(j.qCount, []any{sessionKey}, &n); err != nil {
		return 0, fmt.Errorf("count pending of %s: %w", sessionKey, err)
	}
	return n, nil
}

// PendingCounts is [store.Journal]'s PendingCounts.
func (j Journal) PendingCounts(r Reader) (map[string]int, error) {
	return Counts(r, "pending counts", j.qCounts)
}

// Counts runs q, a query of (key, count) rows, into a map; what names it
// in errors.
func Counts(r Reader, what, q string, args ...any) (map[string]int, error) {
	type kn struct {
		k string
		n int
	}
	rows, err := r.Query(q, args...)
	all, err := collect(rows, err, func(r Rows) (kn, error) {
		var x kn
		err := r.Scan(&x.k, &x.n)
		return x, err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	out := make(map[string]int, len(all))
	for _, x := range all {
		out[x.k] = x.n
	}
	return out, nil
}

// ListPending is [store.Journal]'s ListPending. The limit is written into
// the SQL, not bound: SQLite plans with a bound LIMIT's value, so binding
// it re-prepares the statement on every call (measured: 13 µs instead of
// 6 µs per query).
func (j Journal) ListPending(r Reader, sessionKey string, limit int) ([]store.Entry, error) {
	q := j.qPending
	if limit > 0 {
		q += " LIMIT " + strconv.Itoa(limit)
	}
	es, err := Entries(r.Query(q, sessionKey))
	if err != nil {
		return nil, fmt.Errorf("list pending of %s: %w", sessionKey, err)
	}
	return es, nil
}

// Requeue is Recover's requeue of e inside t at now: its state and
// attempts as store.ApplyRecovery decided, not begun.
func Requeue(t Tx, e store.Entry, now int64) error {
	_, err := t.Exec(`UPDATE journal SET state = ?, attempts = ?, began = ?, updated_at = ? WHERE id = ?`, string(e.State), e.Attempts, false, now, e.ID)
	return err
}
