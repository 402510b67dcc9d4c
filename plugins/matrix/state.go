package matrix

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// stateFile is the plugin's state in its data directory (0600).
const stateFile = "matrix-state.json"

// state is what survives a restart: the device a password login made
// (its token) and the sync position. Since advances only after the host
// stored every message of the sync batch before it, so a restart resumes
// where the last stored batch ended: nothing lost; a crash between the
// host's store and this file's write replays the batch, which the host
// dedupes by event id: nothing doubled.
type state struct {
	// UserID is whose device and token these are: a changed user_id in
	// the config starts afresh.
	UserID      string `json:"user_id"`
	DeviceID    string `json:"device_id,omitempty"`
	AccessToken string `json:"access_token,omitempty"`
	Since       string `json:"since,omitempty"`
	// From is when this state began answering (Unix milliseconds): the
	// plugin's first configuration with no sync position. The first sync
	// skips the rooms' history written before it and keeps what came
	// after, even across a restart before that sync stored a position.
	From int64 `json:"from,omitempty"`
	// Restored is "device version" of the key backup this device has
	// read (backup.go): a new device reads it once.
	Restored string `json:"restored,omitempty"`
}

// store keeps state in dir; a "" dir keeps it in memory only (tests).
type store struct {
	mu  sync.Mutex
	dir string
	st  state
}

func openStore(dir string) (*store, error) {
	s := &store{dir: dir}
	if dir == "" {
		return s, nil
	}
	b, err := os.ReadFile(filepath.Join(dir, stateFile))
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &s.st); err != nil {
		return nil, errors.New("matrix: " + stateFile + " is damaged (" + err.Error() + "): remove it to log in afresh")
	}
	return s, nil
}

// begin makes the state user's: one of another account (whose device and
// position are not this one's) starts afresh. One that has not synced yet
// answers from now (state.From), unless it already has a From: a restart
// before the first sync stored a position keeps the first one.
func (s *store) begin(user string, now time.Time) error {
	st := s.get()
	if st.UserID == user && (st.Since != "" || st.From != 0) {
		return nil
	}
	return s.update(func(s *state) {
		if s.UserID != user {
			*s = state{UserID: user}
		}
		s.From = now.UnixMilli()
	})
}

func (s *store) get() state {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st
}

// update changes the state with f and writes it durably (a temporary
// file, fsynced, renamed over the old one).
func (s *store) update(f func(*state)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := s.st
	f(&next)
	if s.dir != "" {
		b, err := json.Marshal(next)
		if err != nil {
			return err
		}
		if err := writeDurable(filepath.Join(s.dir, stateFile), b); err != nil {
			return err
		}
	}
	s.st = next
	return nil
}
