package session

import (
	"context"
	"errors"

	"github.com/clawhost/clawhost/core/store"
)

// Store is the part of the store an update needs (core/store's Sessions).
type Store interface {
	UpdateSession(ctx context.Context, key string, fn func(s *store.Session, found bool) error) (store.Session, error)
}

// ErrUnchanged, returned by an update's function, ends the update without
// writing; Update returns it.
var ErrUnchanged = errors.New("session metadata unchanged")

// Update changes the metadata of the session under key with fn, in one
// store transaction (a session not stored yet is created, holding only the
// metadata). An error of fn, ErrUnchanged among them, leaves the row as it
// was and is returned.
func (c *Cache) Update(ctx context.Context, st Store, key string, fn func(*Meta) error) (store.Session, error) {
	return st.UpdateSession(ctx, key, func(s *store.Session, found bool) error {
		if !found {
			s.Key = key
		}
		return c.Edit(key, s, fn)
	})
}

// Edit changes the metadata of the row s of session key with fn; for the
// updates that change the row's other fields too, inside their own
// UpdateSession. An error of fn leaves s as it was.
func (c *Cache) Edit(key string, s *store.Session, fn func(*Meta) error) error {
	m, _ := c.Decode(key, s.Chat)
	if err := fn(&m); err != nil {
		return err
	}
	b, err := c.Encode(key, m)
	if err != nil {
		return err
	}
	s.Chat = b
	return nil
}
