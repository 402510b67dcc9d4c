package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/tables"
)

// sessions is the shared row layer's sessions table on this schema.
var sessions = tables.NewSessions("is_verbose")

// errRaced: another writer created the session between our read and our
// insert; the update runs again and sees it.
var errRaced = errors.New("session created concurrently")

// UpdateSession implements [store.Sessions]. A stored session is locked
// (FOR UPDATE) while fn runs; a new one is inserted only if nobody
// inserted it meanwhile, else the update runs again on the stored one.
func (d *DB) UpdateSession(ctx context.Context, key string, fn func(s *store.Session, found bool) error) (store.Session, error) {
	if key == "" {
		return store.Session{}, errors.New("update session: empty key")
	}
	var out store.Session
	var err error
	for range 10 {
		err = d.write(ctx, func(tx pgx.Tx) error {
			s, err := d.updateSession(ctx, tx, key, fn)
			out = s
			return err
		})
		if !errors.Is(err, errRaced) {
			break
		}
	}
	if err != nil {
		return store.Session{}, fmt.Errorf("update session %s: %w", key, err)
	}
	return out, nil
}

// updateSession is UpdateSession's read-modify-write of key's row in tx
// (RecordReply's Reply.Session too); errRaced when a new row's insert
// lost to another writer's (the caller runs the transaction again).
func (d *DB) updateSession(ctx context.Context, tx pgx.Tx, key string, fn func(s *store.Session, found bool) error) (store.Session, error) {
	t := tablesTx{ctx, tx}
	s, found, err := sessions.Row(t, key, " FOR UPDATE")
	if err != nil {
		return store.Session{}, err
	}
	if err := tables.ApplySession(&s, found, key, fn, d.now()); err != nil {
		return store.Session{}, err
	}
	n, err := sessions.Write(t, s, found)
	if err != nil {
		return store.Session{}, err
	}
	if n == 0 {
		return store.Session{}, errRaced
	}
	return s, nil
}
