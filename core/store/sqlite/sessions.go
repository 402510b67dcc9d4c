package sqlite

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/tables"
)

// sessions is the shared row layer's sessions table on this schema.
var sessions = tables.NewSessions("verbose")

// Session implements [store.Sessions].
func (d *DB) Session(ctx context.Context, key string) (store.Session, error) {
	cached, ok, stamp := d.sessions.get(key)
	if ok {
		return cached, nil
	}
	s, err := sessions.Session(d.reader(ctx), key)
	if err != nil {
		return store.Session{}, err
	}
	d.sessions.fill(s, stamp)
	return s, nil
}

// sessionRow is the session under key as this transaction sees it
// (found false: none, s holds only the key).
func (t *wtx) sessionRow(key string) (s store.Session, found bool, err error) {
	if s, found = t.session(key); found {
		return s, true, nil
	}
	return sessions.Row(tablesTx{t}, key, "")
}

// setClaudeCost writes c to its session's row, unless that row is gone or
// of another claude session ([store.Reply.ClaudeCost]).
func (t *wtx) setClaudeCost(c store.ClaudeCost) error {
	s, found, err := t.sessionRow(c.Key)
	if err != nil || !found || s.ClaudeSessionID != c.Of {
		return err
	}
	s.ClaudeCostUSD, s.ClaudeCostOf = c.USD, c.Of
	if _, err := t.exec(`UPDATE sessions SET claude_cost_usd = ?, claude_cost_of = ? WHERE key = ?`, c.USD, c.Of, c.Key); err != nil {
		return err
	}
	t.wroteSession(s)
	return nil
}

// UpdateSession implements [store.Sessions].
func (d *DB) UpdateSession(ctx context.Context, key string, fn func(s *store.Session, found bool) error) (store.Session, error) {
	if key == "" {
		return store.Session{}, errors.New("update session: empty key")
	}
	var out store.Session
	err := d.w.do(ctx, func(t *wtx) error {
		s, err := t.updateSession(key, fn, d.now())
		out = s
		return err
	})
	if err != nil {
		return store.Session{}, fmt.Errorf("update session %s: %w", key, err)
	}
	return out, nil
}

// updateSession is UpdateSession's read-modify-write of key's row in this
// transaction (RecordReply's Reply.Session too), at now.
func (t *wtx) updateSession(key string, fn func(s *store.Session, found bool) error, now time.Time) (store.Session, error) {
	s, found, err := t.sessionRow(key)
	if err != nil {
		return store.Session{}, err
	}
	if err := tables.ApplySession(&s, found, key, fn, now); err != nil {
		return store.Session{}, err
	}
	// The writer is the only one: a row not found is not there.
	if n, err := sessions.Write(tablesTx{t}, s, found); err != nil || n != 1 {
		return store.Session{}, cmp.Or(err, fmt.Errorf("session %s: %d rows written", key, n))
	}
	t.wroteSession(s)
	return s, nil
}
